package checks

import (
	"context"
	"errors"
	"time"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// reach is the audit's second round: what the in-container checks found
// inside runs (servers listening beyond loopback) is probed from the fresh
// run, by one more probe of the session's own when there is anything to
// probe, and from the live runs that sample each run, by the probes still
// waiting in them; every waiting probe then removes its copies. Each plan
// carries its vantage's positive control, so a blocked target is judged
// as in the first round.
func (a *auditor) reach(ctx context.Context, project string, in PlanInput, results []liveRunResult) []report.Check {
	targets := map[string][]Planned{} // by run ID
	var all []Planned
	for _, r := range results {
		if r.run != nil && len(r.reach) > 0 {
			targets[r.run.ID] = r.reach
			all = append(all, r.reach...)
		}
	}
	has := func(c Container) bool { return len(targets[c.ID]) > 0 }
	var jobs []func() []report.Check
	if len(all) > 0 {
		fresh := FreshVantage(in.Dep)
		jobs = append(jobs, func() []report.Check {
			ps := append(a.controls(in, fresh), all...)
			return dropControls(a.vantage(ctx, project, fresh, ps, nil, nil), ps[:len(ps)-len(all)])
		})
	}
	for _, r := range results {
		if r.then == nil {
			continue
		}
		jobs = append(jobs, func() []report.Check {
			var ps []Planned
			if r.vantage != nil {
				for _, peer := range r.vantage.targets(in.Dep, has) {
					ps = append(ps, targets[peer.ID]...)
				}
			}
			var plan *probes.Plan
			nControls := 0
			if len(ps) > 0 {
				controls := a.controls(in, *r.vantage)
				nControls = len(controls)
				ps = append(controls, ps...)
				p := planOf(ps, a.cfg.Timeout)
				plan = &p
			}
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*a.cfg.Timeout+removeBound)
			defer cancel()
			if ctx.Err() != nil {
				plan = nil // interrupted: only the removal
			}
			res := r.then.Finish(fctx, plan)
			rows := a.leftIn(*r.run, res.Left, res.RemoveErr, true, res.ProbeRemoveErr)
			if plan == nil {
				return rows
			}
			if res.Report == nil {
				err := res.Err
				if err == nil {
					err = errNoSecondReport
				}
				return append(rows, probeErrorRows(r.vantage.Name, ps[nControls:], err)...)
			}
			a.noteTargets(ps)
			judged := dropControls(judgeVantage(r.vantage.Name, ps, *res.Report), ps[:nControls])
			return append(rows, judged...)
		})
	}
	var out []report.Check
	for _, rows := range runJobs(ctx, jobs, a.cfg.Workers, closedChan) {
		out = append(out, rows...)
	}
	return out
}

// removeBound is how long a waiting probe gets to remove its copies.
const removeBound = 20 * time.Second

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// controls are the positive controls planned from v.
func (a *auditor) controls(in PlanInput, v Vantage) []Planned {
	return planOnly(in, v, func(c *Check) bool { return c.Control == "" })
}

// dropControls leaves out the rows of the controls, already reported by
// the first round.
func dropControls(rows []report.Check, controls []Planned) []report.Check {
	ids := map[string]bool{}
	for _, c := range controls {
		ids[c.Check] = true
	}
	var out []report.Check
	for _, r := range rows {
		if !ids[r.ID] {
			out = append(out, r)
		}
	}
	return out
}

// errNoSecondReport: the waiting probe gave no report of its second plan.
var errNoSecondReport = errors.New("the probe in the run gave no report of its second plan")
