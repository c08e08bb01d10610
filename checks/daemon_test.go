package checks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

var daemonChecks = []*Check{daemonReferencePatch, daemonGradingGate, daemonPublicView}

// The audit must never send a request that changes a daemon's state.
func TestDaemonRequestsAreSafe(t *testing.T) {
	for _, bad := range []struct{ method, target, body string }{
		{"POST", "/admin/agent_exited", ""},
		{"POST", "/prepare_grading", ""},
		{"POST", "/tool/bash?action=run", `{"cmd":"id"}`},
		{"POST", "/tool/bencher?action=run_poc", `{}`},
		{"POST", "/tool/bencher?action=run_poc", `{"grading":false}`},
		{"POST", "/tool/bencher?action=run_poc", `not json`},
		{"PUT", "/project", ""},
	} {
		assert.False(t, safeDaemonRequest(bad.method, bad.target, bad.body), "%s %s", bad.method, bad.target)
	}
	// Every task any check plans against a daemon is one of the safe ones.
	run := runCtr("2", "ra", "p_agents")
	run.TaskID = "t1"
	d := deployment(true, run)
	in := PlanInput{Config: Config{Timeout: time.Second}.WithDefaults(), Dep: d}
	n := 0
	for _, p := range plan(in, FreshVantage(d)) {
		for _, task := range p.Tasks {
			if task.Kind != probes.KindHTTP || task.Address != "10.0.0.2:4263" {
				continue
			}
			n++
			assert.True(t, safeDaemonRequest(task.Method, task.Target, task.Body), "%s %s", task.Method, task.Target)
			assert.Equal(t, task.Target == "/version", task.KeepExcerpt, "only /version keeps an excerpt")
		}
	}
	assert.Equal(t, 4, n, "three requests and /version")
}

func TestDaemonTargets(t *testing.T) {
	a := runCtr("2", "ra", "p_agents")
	a.WebUI = true
	b := runCtr("3", "rb", "p_agents")
	b.Pair = "pair"
	agent := ctr("4", "agent-b", "p_agents")
	agent.Pair = "pair"
	open := runCtr("5", "rc", "p_default")
	stopped := runCtr("6", "rd", "p_agents")
	stopped.Running = false
	d := deployment(true, a, b, agent, open, stopped)
	names := func(rs []Container) (out []string) {
		for _, r := range rs {
			out = append(out, r.RunName())
		}
		return out
	}
	assert.ElementsMatch(t, []string{"ra", "rb"}, names(daemonTargets(d, FreshVantage(d))))
	assert.Equal(t, []string{"rb"}, names(daemonTargets(d, RunVantage(a))), "not the vantage's own run")
	assert.Equal(t, []string{"ra"}, names(daemonTargets(d, RunVantage(agent))), "not its own sidecar pair")
}

func httpResp(status int, keys ...string) probes.Result {
	return probes.Result{Outcome: probes.Response, Connected: true,
		HTTP: &probes.HTTPResult{Status: status, BodyBytes: 42, BodySHA256: "abc", JSONKeys: keys}}
}

// daemonResults are a daemon's answer to the request and, when given, to
// /version.
func daemonResults(r probes.Result, version ...probes.Result) Results {
	rs := Results{{Name: "request", Result: r}}
	for _, v := range version {
		rs = append(rs, TaskResult{Name: "version", Result: v})
	}
	return rs
}

func TestJudgeDaemon(t *testing.T) {
	version := probes.Result{Outcome: probes.Response, Connected: true, HTTP: &probes.HTTPResult{Status: 200, Excerpt: `{"version":"1.0.3"}`}}
	for _, tc := range []struct {
		check string
		r     probes.Result
		want  report.Status
	}{
		{DaemonReferencePatch, httpResp(403), report.Pass},
		{DaemonReferencePatch, httpResp(200), report.Fail},
		{DaemonReferencePatch, httpResp(404), report.Warn},
		{DaemonReferencePatch, probes.Result{Outcome: probes.Refused}, report.Pass},
		{DaemonReferencePatch, probes.Result{Outcome: probes.Timeout, Connected: true}, report.Error},
		{DaemonReferencePatch, probes.Result{Outcome: probes.Closed, Connected: true}, report.Error},
		{DaemonGradingGate, httpResp(403), report.Pass},
		{DaemonGradingGate, httpResp(500), report.Fail},
		{DaemonGradingGate, httpResp(200), report.Fail},
	} {
		j := judgeForbidden(tc.check)(daemonResults(tc.r, version))
		assert.Equal(t, tc.want, j.Status, "%s %+v", tc.check, tc.r)
		assert.Contains(t, j.Observed, "daemon 1.0.3")
		j2 := judgeForbidden(tc.check)(daemonResults(tc.r))
		assert.Equal(t, j.Status, j2.Status, "the version is evidence, not a condition")
		assert.NotContains(t, j2.Observed, "daemon 1.0.3")
	}
	for _, tc := range []struct {
		r    probes.Result
		want report.Status
	}{
		{httpResp(200, "project", "report", "build_script", "poc_paths[]"), report.Pass},
		{httpResp(200, "project", "reference_patch"), report.Fail},
		{httpResp(200, "task.hidden_tests[]"), report.Fail},
		{probes.Result{Outcome: probes.Response, Connected: true, Detail: "body read timed out",
			HTTP: &probes.HTTPResult{Status: 200, Truncated: true}}, report.Error},
		{probes.Result{Outcome: probes.Response, Connected: true, HTTP: &probes.HTTPResult{Status: 200, DiffLike: true}}, report.Fail},
	} {
		assert.Equal(t, tc.want, judgePublicView(daemonResults(tc.r, version)).Status, "%+v", tc.r.HTTP)
	}
}

// A leaked patch is reported by size and hash only.
func TestJudgeNeverPrintsTheBody(t *testing.T) {
	r := httpResp(200)
	r.HTTP.Excerpt = "SBA-SECRET-PATCH-0123"
	j := judgeForbidden(DaemonReferencePatch)(daemonResults(r, probes.Result{Outcome: probes.Timeout}))
	require.Equal(t, report.Fail, j.Status)
	assert.NotContains(t, j.Observed+j.Message, "SBA-SECRET")
	assert.Contains(t, j.Observed, "sha256:abc")
}

// Every daemon is asked each of the three requests, /version beside the
// reference patch only.
func TestDaemonPlans(t *testing.T) {
	d := deployment(true, runCtr("2", "ra", "p_agents"), runCtr("3", "rb", "p_agents"))
	in := PlanInput{Config: Config{}.WithDefaults(), Dep: d, Vantage: FreshVantage(d)}
	for _, c := range daemonChecks {
		ps := c.Plan(in)
		require.Len(t, ps, 2, c.ID)
		names := []string{}
		for _, task := range ps[0].Tasks {
			names = append(names, task.ID)
		}
		if c == daemonReferencePatch {
			assert.Equal(t, []string{"request", "version"}, names)
		} else {
			assert.Equal(t, []string{"request"}, names, c.ID)
		}
	}
}
