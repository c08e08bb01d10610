package checks

import (
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// The audit must never send a request that changes a daemon's state.
func TestDaemonRequestsAreSafe(t *testing.T) {
	for _, q := range append(daemonRequests, versionRequest) {
		assert.True(t, safeDaemonRequest(q.Method, q.Target, q.Body), "%s %s", q.Method, q.Target)
	}
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
	// Every daemon task the planner makes is from that list.
	run := inspect("2", "run-a", map[string]string{LabelRunID: "ra", LabelTaskID: "t1"}, "p_agents")
	d := deployment(true, run)
	for _, p := range daemonProbes(d, vantage{Name: "fresh-run"}, time.Second) {
		for _, task := range p.Tasks {
			assert.True(t, safeDaemonRequest(task.Method, task.Target, task.Body), "%s %s", task.Method, task.Target)
			assert.Equal(t, strings.HasSuffix(task.Target, "/version"), task.KeepExcerpt, "only /version keeps an excerpt")
		}
	}
}

func TestDaemonTargets(t *testing.T) {
	a := inspect("2", "run-a", map[string]string{LabelRunID: "ra", LabelWebUI: "true"}, "p_agents")
	b := inspect("3", "run-b", map[string]string{LabelRunID: "rb", LabelWebUI: "true", LabelRun: "pair"}, "p_agents")
	agent := inspect("4", "agent-b", map[string]string{LabelRun: "pair"}, "p_agents")
	open := inspect("5", "run-c", map[string]string{LabelRunID: "rc"}, "p_default")
	d := deployment(true, a, b, agent, open)
	names := func(rs []container.InspectResponse) (out []string) {
		for _, r := range rs {
			out = append(out, RunName(r))
		}
		return out
	}
	assert.ElementsMatch(t, []string{"ra", "rb"}, names(daemonTargets(d, vantage{Name: "fresh-run"})))
	assert.Equal(t, []string{"rb"}, names(daemonTargets(d, runVantage(a))), "not the vantage's own run")
	assert.Equal(t, []string{"ra"}, names(daemonTargets(d, runVantage(agent))), "not its own sidecar pair")
}

func httpResp(status int, keys ...string) probes.Result {
	return probes.Result{Outcome: probes.Response, Connected: true,
		HTTP: &probes.HTTPResult{Status: status, BodyBytes: 42, BodySHA256: "abc", JSONKeys: keys}}
}

func TestJudgeDaemon(t *testing.T) {
	version := probes.Result{Outcome: probes.Response, Connected: true, HTTP: &probes.HTTPResult{Status: 200, Excerpt: `{"version":"1.0.3"}`}}
	for _, tc := range []struct {
		check string
		r     probes.Result
		want  report.Status
	}{
		{catalogue.DaemonReferencePatch, httpResp(403), report.Pass},
		{catalogue.DaemonReferencePatch, httpResp(200), report.Fail},
		{catalogue.DaemonReferencePatch, httpResp(404), report.Warn},
		{catalogue.DaemonReferencePatch, probes.Result{Outcome: probes.Refused}, report.Pass},
		{catalogue.DaemonReferencePatch, probes.Result{Outcome: probes.Timeout, Connected: true}, report.Error},
		{catalogue.DaemonReferencePatch, probes.Result{Outcome: probes.Closed, Connected: true}, report.Error},
		{catalogue.DaemonGradingGate, httpResp(403), report.Pass},
		{catalogue.DaemonGradingGate, httpResp(500), report.Fail},
		{catalogue.DaemonGradingGate, httpResp(200), report.Fail},
	} {
		st, obs, _ := judgeForbidden(tc.check, []probes.Result{tc.r, version})
		assert.Equal(t, tc.want, st, "%s %+v", tc.check, tc.r)
		assert.Contains(t, obs, "daemon 1.0.3")
		st2, obs, _ := judgeForbidden(tc.check, []probes.Result{tc.r})
		assert.Equal(t, st, st2, "the version is evidence, not a condition")
		assert.NotContains(t, obs, "daemon 1.0.3")
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
		st, _, _ := judgePublicView([]probes.Result{tc.r, version})
		assert.Equal(t, tc.want, st, "%+v", tc.r.HTTP)
	}
}

// A leaked patch is reported by size and hash only.
func TestJudgeNeverPrintsTheBody(t *testing.T) {
	r := httpResp(200)
	r.HTTP.Excerpt = "SBA-SECRET-PATCH-0123"
	st, obs, msg := judgeForbidden(catalogue.DaemonReferencePatch, []probes.Result{r, {Outcome: probes.Timeout}})
	require.Equal(t, report.Fail, st)
	assert.NotContains(t, obs+msg, "SBA-SECRET")
	assert.Contains(t, obs, "sha256:abc")
}
