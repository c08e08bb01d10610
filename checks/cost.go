package checks

import (
	"context"
	"sync"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// costed counts what an audit asks of its session: the report's cost,
// which shows (and lets tests assert) that an audit grows with the runs.
type costed struct {
	Session
	mu   sync.Mutex
	cost report.Cost
}

func (c *costed) add(probes, execs, tasks int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cost.Probes += probes
	c.cost.RunExecs += execs
	c.cost.TasksSent += tasks
}

func (c *costed) Probe(ctx context.Context, project string, v Vantage, plan probes.Plan, onStart func()) (probes.Report, error) {
	c.add(1, 0, len(plan.Tasks))
	return c.Session.Probe(ctx, project, v, plan, onStart)
}

func (c *costed) InRun(ctx context.Context, run Container, work InRunWork) InRunResult {
	tasks := len(work.Users) * len(work.AsUsers.Tasks)
	if work.AsRoot != nil {
		tasks += len(work.AsRoot.Tasks)
	}
	c.add(0, 1, tasks)
	res := c.Session.InRun(ctx, run, work)
	if res.Then != nil {
		res.Then = &costedFollowup{Followup: res.Then, c: c}
	}
	return res
}

func (c *costed) snapshot() report.Cost {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cost
}

type costedFollowup struct {
	Followup
	c *costed
}

func (f *costedFollowup) Finish(ctx context.Context, plan *probes.Plan) FollowupResult {
	if plan != nil {
		f.c.add(0, 0, len(plan.Tasks))
	}
	return f.Followup.Finish(ctx, plan)
}
