package checks

import (
	"context"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// liveRun audits one live run: from its own network namespace (v, when it
// is a restricted run) and from inside it (socket.admin). The in-container
// examination needs one exec into the run anyway, and the probe it starts
// runs the network plan too, as root in the run's namespaces: on the engine
// that is a fraction of the cost of one more probe container per run.
// Without that exec (socket.admin not wanted), when it could not carry the
// network plan, or when the user asks for it (--live-run-probe container),
// a probe container joins the run's namespace instead.
func (a *auditor) liveRun(ctx context.Context, project string, in activeInputs, run container.InspectResponse, v *vantage) []report.Check {
	var ps []Probe
	if v != nil {
		ps = in.plan(*v)
	}
	if !a.cfg.Wanted(catalogue.SocketAdmin) {
		if len(ps) == 0 {
			return nil
		}
		return a.vantage(ctx, project, *v, ps, nil, nil)
	}
	start := time.Now()
	paths := socketPaths(run)
	plans := inRunPlans{users: []string{agentUser, runnerName}, asUsers: socketPlan(paths, a.cfg.Timeout)}
	if len(ps) > 0 && a.cfg.NetworkInExec() {
		np := planOf(ps, a.cfg.Timeout)
		plans.network = &np
	}
	bin, err := a.binary()
	var m probes.MultiReport
	if err == nil {
		m, err = a.prober(project).inContainer(ctx, run, bin, plans)
	}
	sockets := socketChecks(run, paths, m, err, time.Since(start).Milliseconds())
	if len(ps) == 0 {
		return sockets
	}
	var first *probes.Report
	if err == nil && m.Network != nil {
		first = m.Network
	}
	return append(a.vantage(ctx, project, *v, ps, first, nil), sockets...)
}
