package checks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// plan lists what the wanted active checks probe from one vantage point, in
// catalogue order. IPv6 targets are kept only where the agents network has
// IPv6: elsewhere they are unreachable by construction and only cost time.
func plan(in PlanInput, v Vantage) []Planned { return planOnly(in, v, nil) }

// planOnly plans the checks keep keeps (nil: all).
func planOnly(in PlanInput, v Vantage, keep func(*Check) bool) []Planned {
	in.Vantage = v
	var out []Planned
	for _, c := range registry {
		if c.Plan == nil || !c.On(in.Dep.Backend) || !in.Config.Wants(c.ID) || (keep != nil && !keep(c)) {
			continue
		}
		for _, p := range c.Plan(in) {
			var tasks []probes.Task
			for _, t := range p.Tasks {
				if t.Address == "" || familyOf(t.Address) == "ipv4" || in.Dep.IPv6() {
					tasks = append(tasks, t)
				}
			}
			if len(tasks) == 0 {
				continue
			}
			p.Check, p.Tasks, p.control = c.ID, tasks, c.Control
			out = append(out, p)
		}
	}
	return out
}

// vantage judges the plan of one vantage point: from first, the report of
// a probe that already ran it, else from a probe of the session's own;
// what comes out inconclusive is probed again from a probe of its own.
// onStart, if not nil, is called once a probe has started.
func (a *auditor) vantage(ctx context.Context, project string, v Vantage, ps []Planned, first *probes.Report, onStart func()) []report.Check {
	start := time.Now()
	a.noteTargets(ps)
	checks, err := judgeWithRetries(v.Name, ps, a.cfg.Retries, func(sub []Planned) (probes.Report, error) {
		if first != nil {
			rep := *first
			first = nil
			return rep, nil
		}
		return a.session.Probe(ctx, project, v, planOf(sub, a.cfg.Timeout), onStart)
	})
	if err != nil {
		checks = append([]report.Check{probeError(v.Name, "probe container", err.Error(), "this vantage point could not be probed",
			time.Since(start).Milliseconds())}, probeErrorRows(v.Name, ps, err)...)
	}
	return checks
}

// probeErrorRows are the planned checks of a vantage point that could not
// be probed: errors, never passes.
func probeErrorRows(vantage string, ps []Planned, err error) []report.Check {
	var out []report.Check
	for _, p := range ps {
		out = append(out, report.Check{ID: p.Check, Status: report.Error, Vantage: vantage,
			Target: p.Target, Expected: p.Expected, Observed: "not probed", Message: err.Error()})
	}
	return out
}

// judgeWithRetries probes, judges, and probes again what came out
// inconclusive (with the controls it depends on), up to retries times. Only
// inconclusive results are retried: a target reached once is a failure
// whatever later tries say, and a pass or failure is never re-asked.
func judgeWithRetries(vantageName string, ps []Planned, retries int, run func([]Planned) (probes.Report, error)) ([]report.Check, error) {
	rep, err := run(ps)
	if err != nil {
		return nil, err
	}
	checks := judgeVantage(vantageName, ps, rep)
	for try := 1; try <= retries; try++ {
		var again []int
		controls := map[string]bool{}
		for i, c := range checks {
			if c.Status == report.Inconclusive {
				again = append(again, i)
				controls[ps[i].control] = true
			}
		}
		if len(again) == 0 {
			break
		}
		// The controls come along, so the retry is judged on its own.
		for i, p := range ps {
			if p.control == "" && controls[p.Check] && checks[i].Status != report.Inconclusive {
				again = append(again, i)
			}
		}
		sub := make([]Planned, len(again))
		for k, i := range again {
			sub[k] = ps[i]
		}
		rep, err := run(sub)
		if err != nil {
			break // keep what the first tries showed
		}
		for k, c := range judgeVantage(vantageName, sub, rep) {
			if i := again[k]; checks[i].Status == report.Inconclusive {
				c.Message = strings.TrimSpace(c.Message + fmt.Sprintf(" (try %d of %d)", try+1, retries+1))
				checks[i] = c
			}
		}
	}
	return checks, nil
}

// judgeVantage turns a probe's report into checks, and makes passes of
// checks whose positive control failed inconclusive.
func judgeVantage(vantageName string, ps []Planned, rep probes.Report) []report.Check {
	results, missing := resultsOf(ps, rep)
	checks := make([]report.Check, len(ps))
	failedControls := map[string]bool{}
	for i, p := range ps {
		j := p.Judge(results[i])
		if missing[i] {
			j.Status, j.Message = report.Error, "the probe returned no result for this check"
		}
		checks[i] = report.Check{ID: p.Check, Status: j.Status, Vantage: vantageName, Target: p.Target,
			Expected: p.Expected, Observed: j.Observed, Message: j.Message, DurationMS: results[i].longest()}
		if p.control == "" && j.Status != report.Pass {
			failedControls[p.Check] = true
		}
	}
	for i, p := range ps {
		if p.control != "" && failedControls[p.control] && checks[i].Status == report.Pass {
			checks[i].Status = report.Inconclusive
			checks[i].Message = "positive control " + p.control + " failed: blocked cannot be told from broken"
		}
	}
	return checks
}
