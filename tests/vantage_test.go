package tests

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/fixtures"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// A live run's network checks ride on the exec the in-container checks
// make anyway: the audit starts no probe container in a run's namespace,
// and the run's checks still come from where its agent stands.
func TestLiveRunsProbedInsideTheirExec(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 2})
	var r result
	created := probeContainersCreated(t, d.Project, func() { r = audit(t, d.Project, closedPort(t)) })
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code, "%v", failing(r.report))
	assert.Equal(t, []string{"fresh-run"}, created, "one probe container, the fresh run's")
	for _, run := range d.Runs {
		assertVantagePasses(t, r.report, d.Project, "run:"+run.RunID)
		assertVantagePasses(t, r.report, d.Project, "in-container:"+run.RunID)
	}
	assertNothingCopiedLeft(t, d)
	assertNoProbeRunning(t, d)
}

// Where nothing can be copied into a run (a read-only root), where the
// in-container check is not wanted, or where the user asks for it, a probe
// container joins the run's namespace instead: the network checks are
// never lost with the exec.
func TestLiveRunFallsBackToJoinedProbe(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 2, ReadOnlyRun: true})
	readOnly, writable := d.Runs[0].RunID, d.Runs[1].RunID

	var r result
	created := probeContainersCreated(t, d.Project, func() { r = audit(t, d.Project, closedPort(t)) })
	require.NotNil(t, r.report, r.stderr)
	assert.NotEqual(t, 0, r.code, "a run that cannot be examined from inside is not a pass")
	assert.ElementsMatch(t, []string{"fresh-run", "run:" + readOnly}, created)
	assertVantagePasses(t, r.report, d.Project, "run:"+readOnly)
	assertVantagePasses(t, r.report, d.Project, "run:"+writable)
	for _, c := range checksOf(r.report, d.Project, checks.SocketAdmin) {
		if c.Vantage == "in-container:"+readOnly {
			assert.Equal(t, report.Error, c.Status, "nothing could be copied in: %s", c.Observed)
			assert.Contains(t, c.Observed, "copying the probe into the run")
		}
	}

	created = probeContainersCreated(t, d.Project, func() {
		r = audit(t, d.Project, closedPort(t), "--skip", checks.SocketAdmin, "--skip", checks.IsolationRuns)
	})
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code, "%v", failing(r.report))
	assert.ElementsMatch(t, []string{"fresh-run", "run:" + readOnly, "run:" + writable}, created)
	assertVantagePasses(t, r.report, d.Project, "run:"+readOnly)
	assertVantagePasses(t, r.report, d.Project, "run:"+writable)

	// Asked for, joined probes for every run, and the in-container check
	// still made where it can be.
	created = probeContainersCreated(t, d.Project, func() {
		r = audit(t, d.Project, closedPort(t), "--live-run-probe", "container")
	})
	require.NotNil(t, r.report, r.stderr)
	assert.ElementsMatch(t, []string{"fresh-run", "run:" + readOnly, "run:" + writable}, created)
	assertVantagePasses(t, r.report, d.Project, "run:"+readOnly)
	assertVantagePasses(t, r.report, d.Project, "run:"+writable)
	assertVantagePasses(t, r.report, d.Project, "in-container:"+writable)
	assertNothingCopiedLeft(t, d)

	// `plan` tells the same story before anything is sent.
	assert.Equal(t, map[string]string{"fresh-run": checks.ViaProbeContainer,
		"run:" + readOnly: checks.ViaRunExec, "run:" + writable: checks.ViaRunExec}, planVia(t, d.Project))
	joined := map[string]string{"fresh-run": checks.ViaProbeContainer,
		"run:" + readOnly: checks.ViaProbeContainer, "run:" + writable: checks.ViaProbeContainer}
	assert.Equal(t, joined, planVia(t, d.Project, "--skip", checks.SocketAdmin, "--skip", checks.IsolationRuns))
	assert.Equal(t, joined, planVia(t, d.Project, "--live-run-probe", "container"))
}

// planVia runs `plan` and returns how each vantage point would be probed.
func planVia(t *testing.T, project string, extra ...string) map[string]string {
	t.Helper()
	r := runTool(t, nil, append(append([]string{"plan", "--project", project}, worldArgs(closedPort(t))...), extra...)...)
	require.Equal(t, 0, r.code, r.stderr)
	var plans []checks.VantagePlan
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &plans), r.stdout)
	via := map[string]string{}
	for _, vp := range plans {
		assert.NotEmpty(t, vp.Checks, vp.Vantage)
		via[vp.Vantage] = vp.Via
	}
	return via
}

// probeContainersCreated returns the vantage label of every probe
// container created for the project while fn ran, sorted by creation.
func probeContainersCreated(t *testing.T, project string, fn func()) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	msgs, errs := api.Events(ctx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)), filters.Arg("event", string(events.ActionCreate)),
		filters.Arg("label", "ssebench-audit.project="+project))})
	var mu sync.Mutex
	var created []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case m := <-msgs:
				mu.Lock()
				created = append(created, m.Actor.Attributes["ssebench-audit.vantage"])
				mu.Unlock()
			case <-errs:
				return
			}
		}
	}()
	fn()
	// Events arrive a little after the fact: wait until the engine has
	// reported everything up to now.
	time.Sleep(time.Second)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return created
}

// assertVantagePasses: the vantage has checks, and every one passed.
func assertVantagePasses(t *testing.T, r *report.Report, project, vantage string) {
	t.Helper()
	checks := checksOfVantage(r, project, vantage)
	for _, c := range checks {
		assert.Contains(t, []report.Status{report.Pass, report.Skip}, c.Status, "%s %s %s: %s %s", vantage, c.ID, c.Target, c.Observed, c.Message)
	}
	assert.NotEmpty(t, checks, "no checks from %s", vantage)
}

// assertNoProbeRunning: no process of an audit is left running in a run.
func assertNoProbeRunning(t *testing.T, d *fixtures.Deployment, when ...string) {
	t.Helper()
	for _, p := range probeProcesses(t, d) {
		assert.Fail(t, "an audit's probe still runs", "%s %s", p, strings.Join(when, " "))
	}
}

func probeRunning(t *testing.T, d *fixtures.Deployment) bool {
	return len(probeProcesses(t, d)) > 0
}

// probeProcesses lists the processes in the deployment's runs that run a
// copy of the probe (named .sba-…), as "<run>: <command>".
func probeProcesses(t *testing.T, d *fixtures.Deployment) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	for _, run := range d.Runs {
		top, err := api.ContainerTop(ctx, run.ID, nil)
		require.NoError(t, err)
		for _, p := range top.Processes {
			if cmd := strings.Join(p, " "); strings.Contains(cmd, "/.sba-") {
				out = append(out, run.Name+": "+cmd)
			}
		}
	}
	return out
}
