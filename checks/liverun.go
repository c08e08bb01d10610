package checks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// insideSep joins a check's ID and a task's name into the ID of a task run
// inside a run: "socket.admin/file.0" (the network plan's are "3/connect").
const insideSep = "/"

// liveRun audits one live run: from its own network namespace (v, when it
// is a restricted run) and from inside it. The in-container checks need one
// exec into the run anyway, and the probe it starts runs the network plan
// too, as root in the run's namespaces: on the engine that is a fraction of
// the cost of one more probe container per run. Without that exec (no
// in-container check wanted), when it could not carry the network plan, or
// when the user asks for it (--live-run-probe container), a probe of the
// session's own joins the run's namespace instead.
// With then, the probe stays in the run for a second plan (reach.go),
// when a wanted check follows up what it finds inside runs.
func (a *auditor) liveRun(ctx context.Context, project string, in PlanInput, run Container, v *Vantage, then bool) liveRunResult {
	var ps []Planned
	if v != nil {
		ps = plan(in, *v)
		a.noteVantage(v.Name, run.ID)
	}
	a.noteVantage(InContainerVantage(run), run.ID)
	inside := a.cfg.insideChecks()
	if len(inside) == 0 {
		if len(ps) == 0 {
			return liveRunResult{}
		}
		return liveRunResult{rows: a.vantage(ctx, project, *v, ps, nil, nil)}
	}
	start := time.Now()
	timeoutMS := a.cfg.Timeout.Milliseconds()
	work := InRunWork{Users: []string{AgentUser, RunnerUser},
		AsUsers: probes.Plan{TimeoutMS: timeoutMS}, AsRoot: &probes.Plan{TimeoutMS: timeoutMS}}
	for _, c := range inside {
		work.AsUsers.Tasks = append(work.AsUsers.Tasks, insideTasks(c, c.Inside.AsUsers, run)...)
		work.AsRoot.Tasks = append(work.AsRoot.Tasks, insideTasks(c, c.Inside.AsRoot, run)...)
	}
	network := len(ps) > 0 && a.cfg.NetworkInExec()
	if network {
		work.AsRoot.Tasks = append(work.AsRoot.Tasks, planOf(ps, a.cfg.Timeout).Tasks...)
	}
	work.Then = then && v != nil && len(a.cfg.reachChecks()) > 0
	res := a.session.InRun(ctx, run, work)
	took := time.Since(start).Milliseconds()

	vantage := InContainerVantage(run)
	result := liveRunResult{run: &run, vantage: v, then: res.Then}
	for _, c := range inside {
		seen := insideResults(c, run, res)
		for _, row := range c.Inside.Judge(run, seen) {
			row.ID, row.Vantage, row.DurationMS = c.ID, vantage, took
			result.rows = append(result.rows, row)
		}
		if c.Reach != nil {
			for _, p := range c.Reach(run, in.Dep, seen) {
				p.Check, p.control = c.ID, c.Control
				result.reach = append(result.reach, p)
			}
		}
	}
	result.rows = append(result.rows, a.leftIn(run, res.Left, res.RemoveErr, res.Err == nil && res.Then == nil, res.Report.Error)...)
	if len(ps) == 0 {
		return result
	}
	var first *probes.Report
	if network && res.Err == nil && res.Report.Root != nil {
		first = res.Report.Root
	} else if network && res.Err == nil {
		a.note("run %s: root's plan could not run inside the run (%s): its network checks were made from a joined probe container",
			run.RunName(), res.Report.RootError)
	}
	result.rows = append(a.vantage(ctx, project, *v, ps, first, nil), result.rows...)
	return result
}

// liveRunResult is what auditing one live run gave: its rows and, when its
// probe waits for a second plan, the probe and what other vantage points
// are to probe of this run.
type liveRunResult struct {
	rows    []report.Check
	run     *Container
	vantage *Vantage // the run's own namespace, nil for an open run
	then    Followup
	reach   []Planned
}

// leftIn reports what the audit copied into a run and could not remove: a
// finding the run's owner must see, with the paths. probeDone says the
// probe got to its own removal, which said probeErr.
func (a *auditor) leftIn(run Container, left []string, removeErr error, probeDone bool, probeErr string) []report.Check {
	if len(left) == 0 {
		if probeDone && probeErr != "" {
			a.note("run %s: the probe could not remove its copies (%s); a second exec did", run.RunName(), probeErr)
		}
		return nil
	}
	why := "not removed"
	if removeErr != nil {
		why = removeErr.Error()
	}
	return []report.Check{{ID: AuditProbe, Status: report.Error, Vantage: InContainerVantage(run),
		Target: strings.Join(left, ", "), Expected: "what the audit copied into the run is removed", Observed: why,
		Message: "the audit left files in this run: `ssebench-audit cleanup` removes them"}}
}

// insideTasks are one in-container check's tasks, their IDs prefixed with
// the check's.
func insideTasks(c *Check, tasks func(Container) []probes.Task, run Container) []probes.Task {
	if tasks == nil {
		return nil
	}
	ts := tasks(run)
	for i := range ts {
		ts[i].ID = c.ID + insideSep + ts[i].ID
	}
	return ts
}

// insideResults are what an exec into a run saw for one check: each
// user's results and root's, found by the check's task names.
func insideResults(c *Check, run Container, res InRunResult) InsideResults {
	seen := InsideResults{Err: res.Err, RootErr: res.Report.RootError}
	if res.Err != nil {
		return seen
	}
	for _, u := range res.Report.Users {
		if u.Report == nil {
			if u.User == AgentUser {
				seen.Err = fmt.Errorf("the probe could not run as %s: %s", u.User, u.Error)
			}
			continue // a user the run's image does not have
		}
		name := fmt.Sprintf("%d:%d", u.UID, u.GID)
		if u.User != name {
			name = u.User + " (" + name + ")"
		}
		seen.Users = append(seen.Users, UserResults{User: name, Results: pick(c, c.Inside.AsUsers, run, *u.Report)})
	}
	if res.Report.Root != nil {
		seen.Root = pick(c, c.Inside.AsRoot, run, *res.Report.Root)
	}
	return seen
}

// pick finds one check's results in a report of the exec.
func pick(c *Check, tasks func(Container) []probes.Task, run Container, rep probes.Report) Results {
	if tasks == nil {
		return nil
	}
	byID := make(map[string]probes.Result, len(rep.Results))
	for _, r := range rep.Results {
		byID[r.ID] = r
	}
	var out Results
	for _, t := range tasks(run) {
		r, ok := byID[c.ID+insideSep+t.ID]
		if !ok {
			r = probes.Result{Kind: t.Kind, Outcome: probes.Error, Detail: "no result"}
		}
		r.ID = t.ID
		out = append(out, TaskResult{Name: t.ID, Task: t, Result: r})
	}
	return out
}
