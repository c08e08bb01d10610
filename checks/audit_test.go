package checks_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/checks/checkstest"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

func config(extra ...func(*checks.Config)) checks.Config {
	c := checks.Config{Projects: []string{"p"}, EgressTargets: []string{"198.51.100.2:80"}, DNSServers: []string{"198.51.100.2"},
		HostPorts: []int{2375}, ExternalNames: []string{"example.com"}, Retries: 1}
	for _, f := range extra {
		f(&c)
	}
	return c
}

func fake(runIDs ...string) *checkstest.Backend {
	return &checkstest.Backend{Deployments: map[string]*checks.Deployment{"p": checkstest.Deployment("p", runIDs...)}}
}

func audit(t *testing.T, b *checkstest.Backend, cfg checks.Config) *report.Report {
	t.Helper()
	rep, err := checks.Audit(context.Background(), b, cfg)
	require.NoError(t, err)
	require.Len(t, rep.Projects, 1)
	return rep
}

func rows(rep *report.Report, id, vantage string) []report.Check {
	var out []report.Check
	for _, c := range rep.Projects[0].Checks {
		if c.ID == id && (vantage == "" || c.Vantage == vantage) {
			out = append(out, c)
		}
	}
	return out
}

func vantages(rep *report.Report) map[string]int {
	vs := map[string]int{}
	for _, c := range rep.Projects[0].Checks {
		vs[c.Vantage]++
	}
	return vs
}

// A correct deployment with two live runs: one probe of the audit's own
// (the fresh run), one exec into each run carrying its network plan, every
// check from every vantage, and everything made removed.
func TestAuditCorrectDeployment(t *testing.T) {
	b := fake("ra", "rb")
	rep := audit(t, b, config())
	assert.Equal(t, report.VerdictPass, rep.Verdict, "%v", rep.Projects[0].Checks)
	assert.Equal(t, report.Summary{Pass: rep.Summary.Pass, Skip: rep.Summary.Skip}, rep.Summary, "no warning either")
	assert.Equal(t, "fake", rep.Backend)
	assert.Equal(t, []checkstest.Where{{Vantage: "fresh-run"}}, b.Probes)
	assert.ElementsMatch(t, []string{"ra", "rb"}, b.InRuns)
	assert.Equal(t, []bool{false}, b.Closed, "the session is closed once, not interrupted")
	vs := vantages(rep)
	for _, v := range []string{"host", "fresh-run", "run:ra", "run:rb", "in-container:ra", "in-container:rb"} {
		assert.NotZero(t, vs[v], v)
	}
	assert.Len(t, rows(rep, checks.IsolationProjects, "run:ra"), 0, "isolation is a fresh-run check")
	// One row per daemon, naming where it was asked from.
	patch := rows(rep, checks.DaemonReferencePatch, "")
	require.Len(t, patch, 2)
	assert.Equal(t, []string{"fresh-run", "run:rb"}, patch[0].Vantages, patch[0].Target)
	assert.Equal(t, []string{"fresh-run", "run:ra"}, patch[1].Vantages, patch[1].Target)
	for _, c := range rep.Projects[0].Checks {
		assert.Empty(t, c.Remedy, "%s passed: no fix to give", c.ID)
	}
}

// --live-run-probe container, and no in-container check wanted: no exec
// carries the network plan; a probe joined to each run does.
func TestAuditJoinedProbes(t *testing.T) {
	for name, cfg := range map[string]checks.Config{
		"container": config(func(c *checks.Config) { c.LiveRunProbe = checks.LiveRunContainer }),
		"skip the in-container checks": config(func(c *checks.Config) {
			c.Skip = []string{checks.SocketAdmin, checks.IsolationRuns}
		}),
	} {
		b := fake("ra", "rb")
		rep := audit(t, b, cfg)
		assert.Equal(t, report.VerdictPass, rep.Verdict, name)
		assert.ElementsMatch(t, []checkstest.Where{{Vantage: "fresh-run"}, {Vantage: "run:ra"}, {Vantage: "run:rb"}}, b.Probes, name)
		if name == "container" {
			assert.Len(t, b.InRuns, 2, "the in-container checks still exec")
		} else {
			assert.Empty(t, b.InRuns)
		}
	}
}

// An exec that cannot run in a run (nothing can be copied in): the socket
// check errs, and the run's network plan goes to a joined probe.
func TestAuditInRunFails(t *testing.T) {
	b := fake("ra")
	b.InRunErr = errors.New("copying the probe into the run: read-only file system")
	rep := audit(t, b, config())
	assert.Equal(t, report.VerdictError, rep.Verdict)
	sock := rows(rep, checks.SocketAdmin, "in-container:ra")
	require.Len(t, sock, 1)
	assert.Equal(t, report.Error, sock[0].Status)
	assert.Contains(t, sock[0].Observed, "read-only")
	assert.NotEmpty(t, sock[0].Remedy, "an error says what to do")
	assert.Contains(t, b.Probes, checkstest.Where{Vantage: "run:ra"})
	assert.NotEmpty(t, rows(rep, checks.EgressInternet, "run:ra"))
}

// Root's plan failing inside a run is said (a note) and taken over by a
// joined probe; the socket's real mode is then unknown: an error.
func TestAuditRootPlanFails(t *testing.T) {
	b := fake("ra")
	b.RootErr = errors.New("reading /.sba-root-x.json: permission denied")
	rep := audit(t, b, config())
	assert.Contains(t, b.Probes, checkstest.Where{Vantage: "run:ra"})
	assert.Equal(t, report.Pass, rows(rep, checks.EgressInternet, "run:ra")[0].Status)
	for _, c := range rows(rep, checks.SocketAdmin, "") {
		if c.Target == "/run/ssebench/admin.sock" {
			assert.Equal(t, report.Error, c.Status, c.Observed)
			assert.Contains(t, c.Message, "permission denied")
		}
	}
	require.NotEmpty(t, rep.Notes)
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "run ra: root's plan could not run inside the run (reading /.sba-root-x.json: permission denied)")
}

// What the audit copied into a run and could not remove is a finding, with
// the paths; a removal that only the second exec managed is a note.
func TestAuditReportsCopiesLeft(t *testing.T) {
	b := fake("ra")
	b.NotRemoved, b.RemoveErr = true, errors.New("unlinkat /.sba-probe-x: device or resource busy")
	rep := audit(t, b, config())
	left := rows(rep, checks.AuditProbe, "in-container:ra")
	require.Len(t, left, 1)
	assert.Equal(t, report.Error, left[0].Status)
	assert.Equal(t, "/.sba-probe-x, /.sba-plan-x.json", left[0].Target)
	assert.Contains(t, left[0].Observed, "device or resource busy")
	assert.Equal(t, report.VerdictError, rep.Verdict)

	b = fake("ra")
	b.NotRemoved = true
	rep = audit(t, b, config())
	assert.Empty(t, rows(rep, checks.AuditProbe, ""))
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "run ra: the probe could not remove its copies (remove /.sba-probe-x: read-only file system); a second exec did")
	assert.Equal(t, report.VerdictPass, rep.Verdict)

	// --only must not hide it.
	b = fake("ra")
	b.NotRemoved, b.RemoveErr = true, errors.New("busy")
	rep = audit(t, b, config(func(c *checks.Config) { c.Only = []string{checks.SocketAdmin} }))
	assert.Len(t, rows(rep, checks.AuditProbe, ""), 1)
}

// A leak fails, says what to do, and a reached target is never retried
// into a pass.
func TestAuditLeak(t *testing.T) {
	b := fake("ra")
	b.Answer = func(w checkstest.Where, t probes.Task) probes.Result {
		if t.Kind == probes.KindTCP && t.Address == "198.51.100.2:80" && strings.HasSuffix(w.Vantage, ":ra") {
			return probes.Result{Outcome: probes.Connected}
		}
		return checkstest.Correct(w, t)
	}
	rep := audit(t, b, config())
	assert.Equal(t, report.VerdictFail, rep.Verdict)
	leak := rows(rep, checks.EgressInternet, "run:ra")
	require.Len(t, leak, 1)
	assert.Equal(t, report.Fail, leak[0].Status)
	c, _ := checks.Lookup(checks.EgressInternet)
	assert.Equal(t, c.Remedy, leak[0].Remedy)
	assert.Equal(t, report.Pass, rows(rep, checks.EgressInternet, "fresh-run")[0].Status)
}

// A dead proxy makes the checks it controls inconclusive, retried once.
func TestAuditControlFails(t *testing.T) {
	b := fake()
	b.Answer = func(w checkstest.Where, t probes.Task) probes.Result {
		if t.Address == checkstest.ProxyIP+":4000" {
			return probes.Result{Outcome: probes.Timeout}
		}
		return checkstest.Correct(w, t)
	}
	rep := audit(t, b, config())
	assert.Equal(t, report.VerdictInconclusive, rep.Verdict)
	assert.Len(t, b.Probes, 2, "one try and one retry")
	assert.Equal(t, report.Inconclusive, rows(rep, checks.EgressInternet, "fresh-run")[0].Status)
}

// A vantage point that cannot be probed is an error for it and each of its
// checks, never a pass.
func TestAuditProbeFails(t *testing.T) {
	b := fake()
	b.ProbeErr = errors.New("creating the probe container: no such image")
	rep := audit(t, b, config())
	assert.Equal(t, report.VerdictError, rep.Verdict)
	probe := rows(rep, checks.AuditProbe, "fresh-run")
	require.Len(t, probe, 1)
	assert.Contains(t, probe[0].Observed, "no such image")
	for _, c := range rows(rep, checks.EgressInternet, "fresh-run") {
		assert.Equal(t, report.Error, c.Status)
	}
}

// The engine's error stays in the chain: callers can tell what it was.
func TestAuditEngineUnreachable(t *testing.T) {
	cause := errors.New("dial unix /var/run/docker.sock: connect: permission denied")
	b := fake()
	b.EngineErr = cause
	_, err := checks.Audit(context.Background(), b, config())
	require.Error(t, err)
	assert.ErrorIs(t, err, checks.ErrEngine)
	assert.ErrorIs(t, err, cause, "the cause is wrapped, not flattened into text")
	assert.Zero(t, b.Sessions, "nothing was started")
}

func TestAuditDiscoveryFails(t *testing.T) {
	b := fake()
	b.DiscoverErr = errors.New("listing networks: EOF")
	rep := audit(t, b, config(func(c *checks.Config) { c.Only = []string{checks.NetworkAgentsInternal} }))
	assert.Equal(t, report.VerdictError, rep.Verdict, "--only does not hide it")
	require.Len(t, rep.Projects[0].Checks, 1)
	assert.Equal(t, checks.AuditProbe, rep.Projects[0].Checks[0].ID)
}

// An audit of nothing never passes: bad --only/--skip is refused before
// anything is started, and an audit in which no check ran is an error.
func TestAuditOfNothing(t *testing.T) {
	b := fake()
	_, err := checks.Audit(context.Background(), b, config(func(c *checks.Config) {
		c.Only, c.Skip = []string{checks.DNSProxy}, []string{checks.DNSProxy}
	}))
	assert.ErrorContains(t, err, "no check left to run")
	assert.Zero(t, b.Sessions)

	// The bench-only check makes nothing in an audit.
	rep := audit(t, fake(), config(func(c *checks.Config) { c.Only = []string{checks.RunEgressRecorded} }))
	assert.Empty(t, rep.Projects[0].Checks)
	assert.Equal(t, report.VerdictError, rep.Verdict)
	assert.Equal(t, report.ExitError, rep.ExitCode())
}

// An audit of one live run (bench's in flight): its own checks only.
func TestAuditOneRun(t *testing.T) {
	b := fake("ra", "rb")
	rep := audit(t, b, config(func(c *checks.Config) { c.RunID = "rb" }))
	assert.Equal(t, report.VerdictPass, rep.Verdict)
	assert.Empty(t, b.Probes, "no fresh run")
	assert.Equal(t, []string{"rb"}, b.InRuns)
	for _, c := range rep.Projects[0].Checks {
		assert.NotEqual(t, checks.EngineVersion, c.ID)
		assert.NotEqual(t, checks.NetworkAgentsMembers, c.ID)
		assert.NotContains(t, c.Vantage, "ra")
	}
	assert.Len(t, rows(rep, checks.RunNetworks, ""), 1)

	rep = audit(t, fake("ra"), config(func(c *checks.Config) { c.RunID = "gone" }))
	assert.Equal(t, report.VerdictError, rep.Verdict)
}

// Ctrl-C: the session is closed as interrupted, the report says so.
func TestAuditInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := fake("ra")
	rep, err := checks.Audit(ctx, b, config())
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, b.Closed)
	assert.Equal(t, report.VerdictError, rep.Verdict)
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "interrupted")
}

// What the session could not remove is said.
func TestAuditCloseFails(t *testing.T) {
	b := fake()
	b.CloseErr = errors.New("removing container abc: conflict")
	rep := audit(t, b, config())
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "could not remove everything this audit made (removing container abc: conflict)")
}

func TestGateEvidence(t *testing.T) {
	rep, ev, err := checks.AuditWithEvidence(context.Background(), fake("ra"), config())
	require.NoError(t, err)
	assert.Equal(t, "fake-probe:1", ev.ProbeImage)
	assert.Equal(t, []report.NetworkRef{{Project: "p", Name: "p_agents", ID: "agents-id", Internal: true},
		{Project: "p", Name: "p_default", ID: "default-id"}}, ev.Networks)
	assert.False(t, ev.EndedAt.Before(rep.StartedAt))
}

func TestPlan(t *testing.T) {
	plans, err := checks.Plan(context.Background(), fake("ra"), config())
	require.NoError(t, err)
	require.Len(t, plans, 2)
	assert.Equal(t, "fresh-run", plans[0].Vantage)
	assert.Equal(t, checks.ViaProbeContainer, plans[0].Via)
	assert.Equal(t, "p_agents", plans[0].NetworkMode)
	assert.Equal(t, checks.ViaRunExec, plans[1].Via)
	for _, p := range plans {
		for _, c := range p.Checks {
			for _, task := range c.Tasks {
				assert.NotEmpty(t, task.ID, "%s %s: tasks carry their names", p.Vantage, c.ID)
			}
		}
	}
}

// A gate's audit (DeploymentOnly) is the host checks and the fresh run:
// what a new run would meet; no live run is probed.
func TestAuditDeploymentOnly(t *testing.T) {
	b := fake("ra", "rb")
	rep := audit(t, b, config(func(c *checks.Config) { c.DeploymentOnly = true }))
	assert.Equal(t, report.VerdictPass, rep.Verdict)
	assert.Equal(t, []checkstest.Where{{Vantage: "fresh-run"}}, b.Probes)
	assert.Empty(t, b.InRuns)
	assert.Len(t, rows(rep, checks.RunNetworks, ""), 2, "the runs' host checks are still made: they cost nothing")
	assert.Equal(t, &report.Cost{Probes: 1, TasksSent: rep.Cost.TasksSent}, rep.Cost)
}
