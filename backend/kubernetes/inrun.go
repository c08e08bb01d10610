package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ssebench-audit/ssebench-audit/backend/inrun"
	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/images"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// taskContainer is the container of ssebench's run pods that the agent
// and the daemon run in.
const taskContainer = "task"

// Bounds on an exec into a run pod: what it prints, and how long the
// removal of the copies may take (on a context Ctrl-C does not cancel).
const (
	maxExecStdout = 4 << 20
	maxExecStderr = 16 << 10
	removeTimeout = 20 * time.Second
)

// InRun runs work inside a run pod's task container as on Docker: the
// probe and its plans go in as a tar over an exec's stdin (as `kubectl cp`
// copies: the container needs tar), a second exec runs them as root, and
// the probe removes them; a third exec removes them when it could not,
// and what even that leaves is returned, for the report. Run pods share
// no network to reach each other over (isolation.runs probes them from
// the probe pod), so no probe waits in a run for a second plan.
func (s *session) InRun(ctx context.Context, run checks.Container, work checks.InRunWork) checks.InRunResult {
	exec := s.b.opts.Exec
	if exec == nil {
		return checks.InRunResult{Err: errors.New("no exec into pods: the backend was made without a client for it")}
	}
	// Asked once, before anything is copied: an exec refused at its
	// upgrade cannot tell whether a copy landed, and one never tried can.
	s.execOnce.Do(func() { s.execErr = s.b.mayExec(ctx) })
	if s.execErr != nil {
		return checks.InRunResult{Err: s.execErr}
	}
	s.binOnce.Do(func() { s.bin, s.binErr = images.ReadProbeExecutable("") })
	if s.binErr != nil {
		return checks.InRunResult{Err: s.binErr}
	}
	work.Then = false
	inv, err := inrun.New(s.auditID, s.bin, work)
	if err != nil {
		return checks.InRunResult{Err: err}
	}
	if err := ctx.Err(); err != nil {
		return checks.InRunResult{Err: fmt.Errorf("interrupted: %w", err)} // nothing copied, nothing to remove
	}
	ns := s.b.opts.Namespace
	// The copy is not cut short by Ctrl-C: what it wrote is removed after.
	var stderr bytes.Buffer
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	err = exec(cctx, ns, run.Name, taskContainer, []string{"tar", "-xmf", "-", "-C", "/"}, inrun.Tar(inv.Files),
		probes.NewLimitWriter(&bytes.Buffer{}, maxExecStdout), probes.NewLimitWriter(&stderr, maxExecStderr))
	cancel()
	if err != nil {
		res := checks.InRunResult{Err: fmt.Errorf("copying the probe into the run pod (tar over the exec's stdin): %s%s", oneLine(err), stderrNote(stderr))}
		res.Left, res.RemoveErr = s.removeLeft(ctx, run, inv)
		return res
	}
	var stdout bytes.Buffer
	stderr.Reset()
	ectx, cancel := context.WithTimeout(ctx, 2*s.timeout+30*time.Second)
	err = exec(ectx, ns, run.Name, taskContainer, inv.Cmd, nil,
		probes.NewLimitWriter(&stdout, maxExecStdout), probes.NewLimitWriter(&stderr, maxExecStderr))
	cancel()
	line, _, _ := bytes.Cut(stdout.Bytes(), []byte("\n"))
	m, perr := probes.ParseMultiReport(bytes.NewReader(line), maxExecStdout)
	var res checks.InRunResult
	switch {
	case perr != nil && err != nil:
		res.Err = fmt.Errorf("running the probe: %s%s", oneLine(err), stderrNote(stderr))
	case perr != nil:
		res.Err = fmt.Errorf("the in-container probe: %v%s", perr, stderrNote(stderr))
	default:
		res.Report = m
	}
	if res.Err == nil && m.Removed {
		return res
	}
	res.Left, res.RemoveErr = s.removeLeft(ctx, run, inv)
	return res
}

// mayExec asks the authorizer whether this audit may exec into the runs'
// pods (docs/kubernetes-rbac.yaml's ssebench-audit-exec Role), as both
// verbs an exec is authorized by.
func (b *Backend) mayExec(ctx context.Context) error {
	for _, verb := range []string{"create", "get"} {
		review := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authv1.ResourceAttributes{Namespace: b.opts.Namespace, Verb: verb, Resource: "pods", Subresource: "exec"}}}
		got, err := b.api.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("asking whether this audit may exec into run pods: %s", oneLine(err))
		}
		if !got.Status.Allowed {
			return fmt.Errorf("this audit may not exec into the pods of %s (%s pods/exec: the RBAC manifest's ssebench-audit-exec Role): nothing was copied in", b.opts.Namespace, verb)
		}
	}
	return nil
}

// removeLeft stops a probe still running the copies and removes them, with
// the copied probe itself, on a context of its own; it returns what is
// left and why.
func (s *session) removeLeft(ctx context.Context, run checks.Container, inv inrun.Invocation) ([]string, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	var stderr bytes.Buffer
	err := s.b.opts.Exec(rctx, s.b.opts.Namespace, run.Name, taskContainer, inrun.RemoveCmd(inv.Self, inv.Copied), nil,
		probes.NewLimitWriter(&bytes.Buffer{}, maxExecStdout), probes.NewLimitWriter(&stderr, maxExecStderr))
	if err == nil && stderr.Len() > 0 {
		err = errors.New(firstLine(stderr.String()))
	}
	if err != nil && strings.Contains(err.Error(), inv.Self+": no such file or directory") {
		return nil, nil // the probe is the copy's first file: without it, nothing of the copy landed
	}
	if err != nil {
		return inv.Copied, fmt.Errorf("%s%s", oneLine(err), stderrNote(stderr))
	}
	return nil, nil
}

func stderrNote(b bytes.Buffer) string {
	if b.Len() == 0 {
		return ""
	}
	return " (stderr: " + firstLine(b.String()) + ")"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
