package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// The classification must hold for 20.10 (drops: timeouts) and for current
// engines (SERVFAIL, immediate refusal): both are "blocked".
func TestOutcomeTable(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		out  probes.Outcome
		want report.Status
	}{
		{RuleBlocked, probes.Connected, report.Fail},
		{RuleBlocked, probes.Closed, report.Fail},      // connected, then hung up
		{RuleBlocked, probes.Timeout, report.Pass},     // 20.10: dropped
		{RuleBlocked, probes.Unreachable, report.Pass}, // >= 25: rejected at once
		{RuleBlocked, probes.Refused, report.Pass},
		{RuleBlocked, probes.Error, report.Error},
		{RuleReached, probes.Connected, report.Pass},
		{RuleReached, probes.Timeout, report.Inconclusive},
		{RuleResolves, probes.Address, report.Pass},
		{RuleResolves, probes.ServFail, report.Inconclusive},
		{RuleNoAddress, probes.Address, report.Fail},
		{RuleNoAddress, probes.NXDomain, report.Warn},
		{RuleNoAddress, probes.NoData, report.Warn},
		{RuleNoAddress, probes.ServFail, report.Pass}, // >= 26 on internal networks
		{RuleNoAddress, probes.Timeout, report.Pass},  // 20.10 on internal networks
		{RuleNoAddress, probes.DNSRefused, report.Pass},
		{RuleNoAnswer, probes.NXDomain, report.Fail},
		{RuleNoAnswer, probes.ServFail, report.Fail},
		{RuleNoAnswer, probes.Timeout, report.Pass},
		{RuleNoAnswer, probes.Unreachable, report.Pass},
		{RuleNoAnswer, probes.Response, report.Error}, // not a DNS outcome
	} {
		assert.Equal(t, tc.want, judgeTask(tc.rule, probes.Result{Outcome: tc.out}), "%s/%s", tc.rule, tc.out)
	}
}

// results makes the results of named tasks of one kind.
func results(kind probes.Kind, outcomes ...any) Results {
	var rs Results
	for i := 0; i < len(outcomes); i += 2 {
		name := outcomes[i].(string)
		rs = append(rs, TaskResult{Name: name, Task: probes.Task{ID: name, Kind: kind, Address: name},
			Result: probes.Result{ID: name, Kind: kind, Outcome: outcomes[i+1].(probes.Outcome)}})
	}
	return rs
}

func TestJudgeAggregatesTargets(t *testing.T) {
	var args []any
	for i := range 10 {
		out := probes.Refused
		if i == 7 {
			out = probes.Connected
		}
		args = append(args, "10.0.0.1:"+string(rune('0'+i)), out)
	}
	j := byRule(RuleBlocked)(results(probes.KindTCP, args...))
	assert.Equal(t, report.Fail, j.Status)
	assert.Contains(t, j.Observed, "10.0.0.1:7: connected")
	assert.Contains(t, j.Observed, "others: 9 refused")
	assert.Equal(t, "reached: an agent has a way out here", j.Message)
}

func TestJudgeVantageControls(t *testing.T) {
	ps := []Planned{
		{Check: DNSProxy, Tasks: []probes.Task{{ID: "resolve", Kind: probes.KindDNS}}, Judge: byRule(RuleResolves)},
		{Check: DNSExternal, control: DNSProxy, Tasks: []probes.Task{{ID: "own resolver", Kind: probes.KindDNS}}, Judge: byRule(RuleNoAddress)},
		{Check: DNSExternal, control: DNSProxy, Tasks: []probes.Task{{ID: "own resolver", Kind: probes.KindDNS}}, Judge: byRule(RuleNoAddress)},
		{Check: EgressInternet, control: ProxyReachable, Tasks: []probes.Task{{ID: "connect", Kind: probes.KindTCP}}, Judge: byRule(RuleBlocked)},
	}
	rep := probes.Report{Results: []probes.Result{
		{ID: "0/resolve", Outcome: probes.Timeout},      // control failed
		{ID: "1/own resolver", Outcome: probes.Timeout}, // would pass: now inconclusive
		{ID: "2/own resolver", Outcome: probes.Address}, // a leak stays a failure
		{ID: "3/connect", Outcome: probes.Timeout},      // other control: unaffected
	}}
	got := judgeVantage("fresh-run", ps, rep)
	assert.Equal(t, report.Inconclusive, got[0].Status)
	assert.Equal(t, report.Inconclusive, got[1].Status)
	assert.Equal(t, report.Fail, got[2].Status)
	assert.Equal(t, report.Pass, got[3].Status)

	// A result missing from the probe's report is an error, not a pass.
	got = judgeVantage("fresh-run", ps[3:], probes.Report{})
	assert.Equal(t, report.Error, got[0].Status)
}

// Judges find their results by name: a plan whose tasks come back in
// another order is judged the same.
func TestResultsByName(t *testing.T) {
	ps := []Planned{{Check: EgressProxyForward, Tasks: []probes.Task{
		{ID: "local", Kind: probes.KindHTTP}, {ID: "absolute", Kind: probes.KindHTTP}},
		Judge: func(rs Results) Judgement { return judgeNoForward(rs.Get("local").Result, rs.Get("absolute").Result) }}}
	plan := planOf(ps, 0)
	require.Equal(t, []string{"0/local", "0/absolute"}, []string{plan.Tasks[0].ID, plan.Tasks[1].ID})
	rep := probes.Report{Results: []probes.Result{
		{ID: "0/absolute", Outcome: probes.Response, HTTP: &probes.HTTPResult{Status: 200, BodySHA256: "target"}},
		{ID: "0/local", Outcome: probes.Response, HTTP: &probes.HTTPResult{Status: 404, BodySHA256: "local"}},
	}}
	got := judgeVantage("fresh-run", ps, rep)
	assert.Equal(t, report.Fail, got[0].Status, got[0].Observed)
	assert.Contains(t, got[0].Observed, "absolute-URI GET: 200")
}

func resp(status int, sha string) probes.Result {
	return probes.Result{Outcome: probes.Response, HTTP: &probes.HTTPResult{Status: status, BodySHA256: sha}}
}

func TestJudgeProxyForward(t *testing.T) {
	assert.Equal(t, report.Fail, judgeNoTunnel(resp(200, "")).Status, "an accepted CONNECT is a tunnel out")
	assert.Equal(t, report.Pass, judgeNoTunnel(resp(405, "")).Status)
	assert.Equal(t, report.Pass, judgeNoTunnel(probes.Result{Outcome: probes.Closed}).Status, "a proxy that hangs up refused the tunnel")
	assert.Equal(t, report.Inconclusive, judgeNoTunnel(probes.Result{Outcome: probes.Timeout}).Status)

	local := resp(404, "aaa")
	for _, tc := range []struct {
		abs  probes.Result
		want report.Status
	}{
		{resp(404, "aaa"), report.Pass}, // routed by path like a local request
		{resp(200, "bbb"), report.Fail}, // the target's answer came back
		{resp(302, "ccc"), report.Fail}, // so did its redirect
		{resp(502, "ddd"), report.Warn}, // forwarding, target unreachable
		{resp(400, "eee"), report.Pass}, // refused
		{probes.Result{Outcome: probes.Refused}, report.Inconclusive},
	} {
		assert.Equal(t, tc.want, judgeNoForward(local, tc.abs).Status, "%+v", tc.abs.HTTP)
	}
	// A local answer identical to the target's is indistinguishable: pass.
	assert.Equal(t, report.Pass, judgeNoForward(resp(200, "x"), resp(200, "x")).Status)
}
