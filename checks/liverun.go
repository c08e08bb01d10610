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
	var inside []*Check
	for _, c := range a.cfg.insideChecks() {
		if c.On(in.Dep.Backend) {
			inside = append(inside, c)
		}
	}
	if len(inside) == 0 {
		if len(ps) == 0 {
			return liveRunResult{}
		}
		if !a.joinsRuns() {
			a.note("run %s: its own network was not probed: on this backend only the exec of the in-container checks carries that plan, and none is made", run.RunName())
			return liveRunResult{}
		}
		return liveRunResult{rows: a.vantage(ctx, project, *v, ps, nil, nil)}
	}
	start := time.Now()
	timeoutMS := a.cfg.Timeout.Milliseconds()
	work := InRunWork{Users: []string{AgentUser, RunnerUser},
		AsUsers: probes.Plan{TimeoutMS: timeoutMS}, AsRoot: &probes.Plan{TimeoutMS: timeoutMS}}
	var asks []insideAsk
	for _, c := range inside {
		ask := insideAsk{check: c}
		if c.Inside.AsUsers != nil {
			ask.users = c.Inside.AsUsers(run)
		}
		if c.Inside.AsRoot != nil {
			ask.root = c.Inside.AsRoot(run)
		}
		work.AsUsers.Tasks = append(work.AsUsers.Tasks, prefixed(c.ID+insideSep, ask.users)...)
		work.AsRoot.Tasks = append(work.AsRoot.Tasks, prefixed(c.ID+insideSep, ask.root)...)
		asks = append(asks, ask)
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
	reports := indexInRun(res)
	for _, ask := range asks {
		c := ask.check
		seen := ask.results(res, reports)
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
	switch {
	case network && res.Err == nil && res.Report.Root != nil:
		first = res.Report.Root
	case !a.joinsRuns():
		// Said once, by the in-container rows' errors or by this note.
		why := res.Report.RootError
		if res.Err != nil {
			why = res.Err.Error()
		}
		a.note("run %s: its own network was not probed: root's plan could not run inside it (%s), and this backend cannot join a run otherwise", run.RunName(), why)
		return result
	case network && res.Err == nil:
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

// insideAsk is what one in-container check asks of a run.
type insideAsk struct {
	check       *Check
	users, root []probes.Task
}

// inRunReports are the exec's reports, indexed: each user's that ran (in
// the order asked) and root's.
type inRunReports struct {
	users []userIndex
	root  map[string]probes.Result
}

type userIndex struct {
	name    string
	results map[string]probes.Result
}

// indexInRun indexes what an exec into a run reported, once for all the
// checks that asked it.
func indexInRun(res InRunResult) inRunReports {
	var out inRunReports
	for _, u := range res.Report.Users {
		if u.Report == nil {
			continue
		}
		name := fmt.Sprintf("%d:%d", u.UID, u.GID)
		if u.User != name {
			name = u.User + " (" + name + ")"
		}
		out.users = append(out.users, userIndex{name: name, results: indexResults(*u.Report)})
	}
	if res.Report.Root != nil {
		out.root = indexResults(*res.Report.Root)
	}
	return out
}

// results are what an exec into a run saw for one check: each user's
// results and root's, found by the check's task names.
func (ask insideAsk) results(res InRunResult, reports inRunReports) InsideResults {
	seen := InsideResults{Err: res.Err, RootErr: res.Report.RootError}
	if res.Err != nil {
		return seen
	}
	for _, u := range res.Report.Users {
		if u.Report == nil && u.User == AgentUser {
			seen.Err = fmt.Errorf("the probe could not run as %s: %s", u.User, u.Error)
		} // else a user the run's image does not have
	}
	prefix := ask.check.ID + insideSep
	for _, u := range reports.users {
		rs, _ := named(prefix, ask.users, u.results)
		seen.Users = append(seen.Users, UserResults{User: u.name, Results: rs})
	}
	if reports.root != nil {
		seen.Root, _ = named(prefix, ask.root, reports.root)
	}
	return seen
}
