package checks

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/ssebench-audit/ssebench-audit/probes"
)

// inRunPlans is what one exec in a run container carries: a plan run as
// each agent-side user and, when the run is audited from its own network
// namespace, the run's network plan, run as root beside them.
type inRunPlans struct {
	users   []string
	asUsers probes.Plan
	network *probes.Plan
}

// inContainer runs plans inside a run container from a copy of the tool's
// binary: one exec as root, in which the probe runs the network plan and,
// meanwhile, the other plan as each user (resolving names in the run's own
// /etc/passwd), and then removes the copies. A second exec removes them,
// and stops that probe, when the first could not (an interrupted audit).
func (pr *prober) inContainer(ctx context.Context, run container.InspectResponse, bin []byte, plans inRunPlans) (probes.MultiReport, error) {
	binPath := pr.copiedPath("probe")
	planPath := pr.copiedPath("plan") + ".json"
	netPath := pr.copiedPath("net") + ".json"
	files := map[string]tarFile{binPath[1:]: {0o755, bin}}
	copied := []string{binPath, planPath}
	cmd := []string{binPath, "probe", "--plan", planPath}
	for path, plan := range map[string]*probes.Plan{planPath: &plans.asUsers, netPath: plans.network} {
		if plan == nil {
			continue
		}
		data, err := json.Marshal(plan)
		if err != nil {
			return probes.MultiReport{}, err
		}
		files[path[1:]] = tarFile{0o444, data}
	}
	if plans.network != nil {
		copied = append(copied, netPath)
		cmd = append(cmd, "--network-plan", netPath)
	}
	for _, p := range copied {
		cmd = append(cmd, "--remove", p)
	}
	for _, u := range plans.users {
		cmd = append(cmd, "--as", u)
	}
	if err := ctx.Err(); err != nil {
		return probes.MultiReport{}, fmt.Errorf("interrupted: %w", err) // nothing copied, nothing to remove
	}
	// Copy to the root: it exists in every image, /tmp does not. Ctrl-C
	// does not cut a copy short: the engine would still complete it, maybe
	// after the removal below, so the copy runs to its end and is removed.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	err := pr.api.CopyToContainer(cctx, run.ID, "/", filesTar(files), container.CopyToContainerOptions{})
	cancel()
	if err != nil {
		return probes.MultiReport{}, fmt.Errorf("copying the probe into the run: %w", err)
	}
	removed := false
	defer func() {
		if removed {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		_ = pr.execRemove(rctx, run.ID, binPath, copied)
	}()
	if err := ctx.Err(); err != nil {
		return probes.MultiReport{}, fmt.Errorf("interrupted: %w", err)
	}
	stdout, stderr, err := pr.exec(ctx, run.ID, "0:0", cmd)
	if err != nil {
		return probes.MultiReport{}, fmt.Errorf("running the probe: %w", err)
	}
	m, err := probes.ParseMultiReport(bytes.NewReader(stdout), maxProbeStdout)
	if err != nil {
		return probes.MultiReport{}, fmt.Errorf("the in-container probe: %v (stderr: %s)", err, firstLine(stderr))
	}
	removed = m.Removed
	return m, nil
}

// copiedPath names a file this audit copies into a run, at its root (it
// exists in every image, /tmp does not); copiedName (copies.go) matches it.
func (pr *prober) copiedPath(kind string) string {
	return "/" + probes.CopiedPrefix + kind + "-" + pr.auditID
}

// execRemove runs, as root, the copied probe at self to stop the probes
// still running any of paths and to remove paths (self among them).
func (pr *prober) execRemove(ctx context.Context, id, self string, paths []string) error {
	cmd := []string{self, "probe"}
	for _, p := range paths {
		cmd = append(cmd, "--remove", p)
	}
	_, stderr, err := pr.exec(ctx, id, "0:0", cmd)
	if err == nil && len(stderr) > 0 {
		err = errors.New(firstLine(stderr))
	}
	return err
}

// execEnv blanks, for the probe, what the run's own environment could set
// to change how a Go program runs (the exec inherits that environment), and
// keeps the probe to one core of the run's: its tasks wait on the network,
// and on a busy host one P cost 4% less CPU in all (measured, 20 runs).
var execEnv = []string{"GODEBUG=", "GOGC=", "GOMEMLIMIT=", "GOMAXPROCS=1", "GOTRACEBACK="}

// exec runs cmd in a container as user and returns its bounded output.
func (pr *prober) exec(ctx context.Context, id, user string, cmd []string) ([]byte, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*pr.timeout+30*time.Second)
	defer cancel()
	created, err := pr.api.ContainerExecCreate(ctx, id, container.ExecOptions{User: user, Cmd: cmd, Env: execEnv,
		AttachStdout: true, AttachStderr: true})
	if err != nil {
		return nil, nil, err
	}
	att, err := pr.api.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, nil, err
	}
	defer att.Close()
	go func() { <-ctx.Done(); att.Close() }() // unblock the read on timeout or Ctrl-C
	var out, errb bytes.Buffer
	_, _ = stdcopy.StdCopy(probes.NewLimitWriter(&out, maxProbeStdout+1), probes.NewLimitWriter(&errb, maxProbeStderr),
		io.LimitReader(att.Reader, 2*maxProbeStdout))
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("interrupted or timed out: %w", ctx.Err())
	}
	return out.Bytes(), errb.Bytes(), nil
}

type tarFile struct {
	mode int64
	data []byte
}

// filesTar streams a tar of files: the binary copied into every run is
// written from the one shared slice, never buffered once per run.
func filesTar(files map[string]tarFile) io.Reader {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	r, w := io.Pipe()
	go func() {
		tw := tar.NewWriter(w)
		for _, n := range names {
			f := files[n]
			if err := tw.WriteHeader(&tar.Header{Name: n, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
				w.CloseWithError(err)
				return
			}
			if _, err := tw.Write(f.data); err != nil {
				w.CloseWithError(err)
				return
			}
		}
		w.CloseWithError(tw.Close())
	}()
	return r
}
