package docker

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/ssebench-audit/ssebench-audit/backend/inrun"
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
	inv, err := inrun.New(s.auditID, bin, work)
	if err != nil {
		return checks.InRunResult{Err: err}
	}
	if err := ctx.Err(); err != nil {
		return checks.InRunResult{Err: fmt.Errorf("interrupted: %w", err)} // nothing copied, nothing to remove
	}
	// Copy to the root: it exists in every image, /tmp does not. Ctrl-C
	// does not cut a copy short: the engine would still complete it, maybe
	// after the removal below, so the copy runs to its end and is removed.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	err = s.api.CopyToContainer(cctx, run.ID, "/", inrun.Tar(inv.Files), container.CopyToContainerOptions{})
	cancel()
	if err != nil {
		return checks.InRunResult{Err: fmt.Errorf("copying the probe into the run: %w", err)}
	}
	res = s.startInRun(ctx, run, inv.Self, inv.Copied, inv.Cmd, work.Then)
	if res.Then != nil || (res.Err == nil && res.Report.Removed) {
		return res
	}
	res.Left, res.RemoveErr = s.removeLeft(ctx, run.ID, inv.Self, inv.Copied)
	return res
}

// startInRun starts the copied probe and reads its first line: its report
// (and, without then, its removal of the copies). With then, the probe
// waits for a second plan, its stdin attached: Finish sends it.
func (s *session) startInRun(ctx context.Context, run checks.Container, self string, copied, cmd []string, then bool) checks.InRunResult {
	if err := ctx.Err(); err != nil {
		return checks.InRunResult{Err: fmt.Errorf("interrupted: %w", err)}
	}
	x, err := s.startExec(ctx, run.ID, "0:0", cmd, then)
	if err != nil {
		return checks.InRunResult{Err: fmt.Errorf("running the probe: %w", err)}
	}
	lctx, cancel := context.WithTimeout(ctx, 2*s.timeout+30*time.Second)
	defer cancel()
	line, err := x.line(lctx)
	if err != nil {
		x.close()
		return checks.InRunResult{Err: fmt.Errorf("running the probe: %w (stderr: %s)", err, x.stderrLine())}
	}
	m, err := probes.ParseMultiReport(bytes.NewReader(line), maxProbeStdout)
	if err != nil || !then {
		x.close()
	}
	if err != nil {
		return checks.InRunResult{Err: fmt.Errorf("the in-container probe: %v (stderr: %s)", err, x.stderrLine())}
	}
	if !then {
		return checks.InRunResult{Report: m}
	}
	f := &followup{s: s, x: x, run: run, self: self, copied: copied}
	s.mu.Lock()
	if s.waiting == nil {
		s.waiting = map[*followup]bool{}
	}
	s.waiting[f] = true
	s.mu.Unlock()
	return checks.InRunResult{Report: m, Then: f}
}

// copiedPath names a file this audit copies into a run (inrun.CopiedPath);
// copiedName (copies.go) matches it.
func (s *session) copiedPath(kind string) string { return inrun.CopiedPath(s.auditID, kind) }
