package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// InRun runs work inside a run container from a copy of the tool's binary:
// one exec as root, in which the probe runs root's plan and, meanwhile,
// the other plan as each user (resolving names in the run's own
// /etc/passwd), and then removes the copies. A second exec removes them,
// and stops that probe, when the first could not (an interrupted audit);
// what even that leaves is returned, for the report.
func (s *session) InRun(ctx context.Context, run checks.Container, work checks.InRunWork) (res checks.InRunResult) {
	bin, err := s.binary()
	if err != nil {
		return checks.InRunResult{Err: err}
	}
	binPath := s.copiedPath("probe")
	planPath := s.copiedPath("plan") + ".json"
	rootPath := s.copiedPath("root") + ".json"
	files := map[string]tarFile{binPath[1:]: {0o755, bin}}
	copied := []string{binPath, planPath}
	cmd := []string{binPath, "probe", "--plan", planPath}
	for path, plan := range map[string]*probes.Plan{planPath: &work.AsUsers, rootPath: work.AsRoot} {
		if plan == nil {
			continue
		}
		data, err := json.Marshal(plan)
		if err != nil {
			return checks.InRunResult{Err: err}
		}
		files[path[1:]] = tarFile{0o444, data}
	}
	if work.AsRoot != nil {
		copied = append(copied, rootPath)
		cmd = append(cmd, "--root-plan", rootPath)
	}
	for _, p := range copied {
		cmd = append(cmd, "--remove", p)
	}
	for _, u := range work.Users {
		cmd = append(cmd, "--as", u)
	}
	if work.Then {
		cmd = append(cmd, "--then-stdin")
	}
	if err := ctx.Err(); err != nil {
		return checks.InRunResult{Err: fmt.Errorf("interrupted: %w", err)} // nothing copied, nothing to remove
	}
	// Copy to the root: it exists in every image, /tmp does not. Ctrl-C
	// does not cut a copy short: the engine would still complete it, maybe
	// after the removal below, so the copy runs to its end and is removed.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	err = s.api.CopyToContainer(cctx, run.ID, "/", filesTar(files), container.CopyToContainerOptions{})
	cancel()
	if err != nil {
		return checks.InRunResult{Err: fmt.Errorf("copying the probe into the run: %w", err)}
	}
	if work.Then {
		return s.inRunThen(ctx, run, binPath, copied, cmd)
	}
	defer func() {
		if res.Err == nil && res.Report.Removed {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		if err := s.execRemove(rctx, run.ID, binPath, copied); err != nil {
			res.Left, res.RemoveErr = copied, err
		}
	}()
	if err := ctx.Err(); err != nil {
		return checks.InRunResult{Err: fmt.Errorf("interrupted: %w", err)}
	}
	stdout, stderr, err := s.exec(ctx, run.ID, "0:0", cmd)
	if err != nil {
		return checks.InRunResult{Err: fmt.Errorf("running the probe: %w", err)}
	}
	m, err := probes.ParseMultiReport(bytes.NewReader(stdout), maxProbeStdout)
	if err != nil {
		return checks.InRunResult{Err: fmt.Errorf("the in-container probe: %v (stderr: %s)", err, firstLine(stderr))}
	}
	return checks.InRunResult{Report: m}
}

// copiedPath names a file this audit copies into a run, at its root (it
// exists in every image, /tmp does not); copiedName (copies.go) matches it.
func (s *session) copiedPath(kind string) string {
	return "/" + probes.CopiedPrefix + kind + "-" + s.auditID
}

// execRemove runs, as root, the copied probe at self to stop the probes
// still running any of paths and to remove paths (self among them).
func (s *session) execRemove(ctx context.Context, id, self string, paths []string) error {
	cmd := []string{self, "probe"}
	for _, p := range paths {
		cmd = append(cmd, "--remove", p)
	}
	_, stderr, err := s.exec(ctx, id, "0:0", cmd)
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
func (s *session) exec(ctx context.Context, id, user string, cmd []string) ([]byte, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*s.timeout+30*time.Second)
	defer cancel()
	created, err := s.api.ContainerExecCreate(ctx, id, container.ExecOptions{User: user, Cmd: cmd, Env: execEnv,
		AttachStdout: true, AttachStderr: true})
	if err != nil {
		return nil, nil, err
	}
	att, err := s.api.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
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
