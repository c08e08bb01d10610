package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
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

func resp(status int, sha string) probes.Result {
	return probes.Result{Outcome: probes.Response, HTTP: &probes.HTTPResult{Status: status, BodySHA256: sha}}
}

func TestJudgeProxyForward(t *testing.T) {
	st, _, _ := judgeNoTunnel(resp(200, ""))
	assert.Equal(t, report.Fail, st, "an accepted CONNECT is a tunnel out")
	st, _, _ = judgeNoTunnel(resp(405, ""))
	assert.Equal(t, report.Pass, st)
	st, _, _ = judgeNoTunnel(probes.Result{Outcome: probes.Closed})
	assert.Equal(t, report.Pass, st, "a proxy that hangs up refused the tunnel")
	st, _, _ = judgeNoTunnel(probes.Result{Outcome: probes.Timeout})
	assert.Equal(t, report.Inconclusive, st)

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
		st, _, _ := judgeNoForward(local, tc.abs)
		assert.Equal(t, tc.want, st, "%+v", tc.abs.HTTP)
	}
	// A local answer identical to the target's is indistinguishable: pass.
	st, _, _ = judgeNoForward(resp(200, "x"), resp(200, "x"))
	assert.Equal(t, report.Pass, st)
}

func TestJudgeVantageControls(t *testing.T) {
	ps := []Probe{
		{Check: catalogue.DNSProxy, Rule: RuleResolves, Tasks: []probes.Task{{ID: "0.0", Kind: probes.KindDNS}}},
		{Check: catalogue.DNSExternal, Rule: RuleNoAddress, Control: catalogue.DNSProxy, Tasks: []probes.Task{{ID: "1.0", Kind: probes.KindDNS}}},
		{Check: catalogue.DNSExternal, Rule: RuleNoAddress, Control: catalogue.DNSProxy, Tasks: []probes.Task{{ID: "2.0", Kind: probes.KindDNS}}},
		{Check: catalogue.EgressInternet, Rule: RuleBlocked, Control: catalogue.ProxyReachable, Tasks: []probes.Task{{ID: "3.0", Kind: probes.KindTCP}}},
	}
	rep := probes.Report{Results: []probes.Result{
		{ID: "0.0", Outcome: probes.Timeout}, // control failed
		{ID: "1.0", Outcome: probes.Timeout}, // would pass: now inconclusive
		{ID: "2.0", Outcome: probes.Address}, // a leak stays a failure
		{ID: "3.0", Outcome: probes.Timeout}, // other control: unaffected
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

func TestJudgeAggregatesTargets(t *testing.T) {
	p := Probe{Check: catalogue.EgressHost, Rule: RuleBlocked}
	var results []probes.Result
	for i := 0; i < 10; i++ {
		p.Tasks = append(p.Tasks, probes.Task{Kind: probes.KindTCP, Address: "10.0.0.1:" + string(rune('0'+i))})
		results = append(results, probes.Result{Outcome: probes.Refused})
	}
	results[7].Outcome = probes.Connected
	st, obs, _ := judge(p, results)
	assert.Equal(t, report.Fail, st)
	assert.Contains(t, obs, "10.0.0.1:7: connected")
	assert.Contains(t, obs, "9 refused")
}
