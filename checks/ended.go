package checks

import (
	"context"

	"github.com/ssebench-audit/ssebench-audit/report"
)

// noteTargets remembers which run container each planned check on another
// run probes.
func (a *auditor) noteTargets(ps []Planned) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range ps {
		if p.TargetRun != "" {
			a.noteRun("target "+p.Target, p.TargetRun)
		}
	}
}

// noteVantage remembers the run container a vantage point stands in.
func (a *auditor) noteVantage(vantage, containerID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.noteRun("vantage "+vantage, containerID)
}

func (a *auditor) noteRun(key, containerID string) {
	if a.runsOf == nil {
		a.runsOf = map[string]string{}
	}
	a.runsOf[key] = containerID
}

// runOf is the run container a row is about (as its target) or stands in
// (as its vantage), "" for none.
func (a *auditor) runOf(r report.Check) (target, vantage string) {
	return a.runsOf["target "+r.Target], a.runsOf["vantage "+r.Vantage]
}

// endedTargets: a check that could not be judged (an error) because a run
// it was about ended while it was audited (its daemon shutting down
// mid-request, a probe that could no longer join it) is not judged, and
// says so: runs come and go while a benchmark runs, and one that is gone
// leaks nothing. Whether a run ended is asked of the backend once, only
// when there is such an error.
func (a *auditor) endedTargets(ctx context.Context, project string, rows []report.Check) []report.Check {
	a.mu.Lock()
	var suspects []int
	for i, r := range rows {
		if t, v := a.runOf(r); r.Status == report.Error && (t != "" || v != "") {
			suspects = append(suspects, i)
		}
	}
	a.mu.Unlock()
	if len(suspects) == 0 || ctx.Err() != nil {
		return rows
	}
	d, err := a.backend.Discover(ctx, project)
	if err != nil {
		return rows
	}
	running := map[string]bool{}
	for _, r := range d.LiveRuns() {
		running[r.ID] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, i := range suspects {
		t, v := a.runOf(rows[i])
		if (t != "" && !running[t]) || (v != "" && !running[v]) {
			rows[i].Status = report.Skip
			rows[i].Message = "the run ended while it was audited: not judged (" + rows[i].Message + ")"
		}
	}
	return rows
}
