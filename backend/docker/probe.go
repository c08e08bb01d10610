package docker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/ssebench-audit/ssebench-audit/backend/inrun"
	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// Bounds on what the host reads back from a probe.
const (
	maxProbeStdout = 4 << 20
	maxProbeStderr = 16 << 10
	planPath       = "/plan.json"
)

// Probe runs a plan from a vantage point in a fresh probe container and
// returns the probe's report. The container is removed on every path.
func (s *session) Probe(ctx context.Context, project string, v checks.Vantage, plan probes.Plan, onStart func()) (probes.Report, error) {
	image, err := s.probeImage(ctx)
	if err != nil {
		return probes.Report{}, err
	}
	planJSON, err := json.Marshal(plan)
	if err != nil {
		return probes.Report{}, err
	}
	cfg := &container.Config{
		Image:  image,
		Cmd:    []string{"--plan", planPath},
		Labels: map[string]string{LabelProbe: s.auditID, LabelVantage: v.Name, LabelProject: project},
	}
	host := &container.HostConfig{}
	var netCfg *network.NetworkingConfig
	if v.Run != nil {
		// A joined namespace keeps the run's own resolver.
		host.NetworkMode = container.NetworkMode("container:" + v.Run.ID)
	} else {
		agents := checks.AgentsName(project)
		host.NetworkMode = container.NetworkMode(agents)
		netCfg = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{agents: {}}}
		if s.opts.ProbeDNS != "" {
			host.DNS = []string{s.opts.ProbeDNS}
		}
	}
	if err := ctx.Err(); err != nil {
		return probes.Report{}, fmt.Errorf("interrupted: %w", err)
	}
	// Ctrl-C does not cut the create short: the engine would complete it
	// anyway, and the container would be known to nobody. Close waits.
	if err := s.startProbing(); err != nil {
		return probes.Report{}, err
	}
	defer s.probing.Done()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	created, err := s.api.ContainerCreate(cctx, cfg, host, netCfg, nil, "")
	cancel()
	if err != nil {
		return probes.Report{}, fmt.Errorf("creating the probe container: %w", err)
	}
	defer s.remove(ctx, created.ID)

	if err := s.api.CopyToContainer(ctx, created.ID, "/", inrun.Tar(map[string]inrun.File{planPath[1:]: {Mode: 0o444, Data: planJSON}}), container.CopyToContainerOptions{}); err != nil {
		return probes.Report{}, fmt.Errorf("copying the plan into the probe: %w", err)
	}
	if err := s.api.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return probes.Report{}, fmt.Errorf("starting the probe container: %w", err)
	}
	if onStart != nil {
		onStart()
	}
	return s.readReport(ctx, created.ID, deadline(plan))
}

// readReport follows the probe's output and returns as soon as its report
// line is complete. It does not wait for the container's exit: on 20.10 the
// engine reports that exit only once the embedded DNS has given up on the
// probe's unanswerable queries, seconds after the probe is done.
func (s *session) readReport(ctx context.Context, id string, limit time.Duration) (probes.Report, error) {
	readCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	rc, err := s.api.ContainerLogs(readCtx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		return probes.Report{}, fmt.Errorf("reading the probe's output: %w", err)
	}
	defer rc.Close()
	outR, outW := io.Pipe()
	stderr := &bytes.Buffer{}
	go func() {
		_, err := stdcopy.StdCopy(outW, probes.NewLimitWriter(stderr, maxProbeStderr), rc)
		outW.CloseWithError(err)
	}()
	defer outR.Close()
	// The probe writes one JSON document on one line.
	line, err := bufio.NewReaderSize(io.LimitReader(outR, maxProbeStdout+1), 64<<10).ReadBytes('\n')
	switch {
	case ctx.Err() != nil:
		return probes.Report{}, fmt.Errorf("interrupted: %w", ctx.Err())
	case readCtx.Err() != nil:
		return probes.Report{}, fmt.Errorf("the probe did not report within %s", limit)
	case err != nil && len(line) == 0:
		return probes.Report{}, fmt.Errorf("the probe ended without a report: %s", firstLine(stderr.Bytes()))
	}
	rep, err := probes.ParseReport(bytes.NewReader(line), maxProbeStdout)
	if err != nil {
		return probes.Report{}, fmt.Errorf("reading the probe's report: %v (stderr: %s)", err, firstLine(stderr.Bytes()))
	}
	return rep, nil
}

// deadline is how long a probe container may take: its tasks run
// concurrently, so one probe timeout plus room for the container's start.
func deadline(plan probes.Plan) time.Duration {
	longest := time.Duration(plan.TimeoutMS) * time.Millisecond
	for _, t := range plan.Tasks {
		if d := time.Duration(t.TimeoutMS) * time.Millisecond; d > longest {
			longest = d
		}
	}
	return 2*longest + 30*time.Second
}

// remove force-removes a probe on a context Ctrl-C does not cancel.
func (s *session) remove(ctx context.Context, id string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	_ = s.api.ContainerRemove(rctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
}

func firstLine(b []byte) string {
	s := string(b)
	for i, r := range s {
		if r == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
