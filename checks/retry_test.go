package checks

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// scripted answers each try with outcomes by planned check target.
func scripted(tries ...map[string]probes.Outcome) (func([]Planned) (probes.Report, error), *[][]string) {
	var asked [][]string
	n := 0
	return func(ps []Planned) (probes.Report, error) {
		if n >= len(tries) {
			return probes.Report{}, errors.New("no more tries")
		}
		answers := tries[n]
		n++
		var rep probes.Report
		var names []string
		plan := planOf(ps, 0) // the IDs the session's probe would report
		k := 0
		for _, p := range ps {
			names = append(names, p.Target)
			for range p.Tasks {
				t := plan.Tasks[k]
				k++
				rep.Results = append(rep.Results, probes.Result{ID: t.ID, Kind: t.Kind, Outcome: answers[p.Target]})
			}
		}
		asked = append(asked, names)
		return rep, nil
	}, &asked
}

func tcp(name string) []probes.Task { return []probes.Task{{ID: name, Kind: probes.KindTCP}} }

func retryPlans() []Planned {
	return []Planned{
		{Check: ProxyReachable, Target: "proxy", Tasks: tcp("connect"), Judge: byRule(RuleReached)},
		{Check: EgressInternet, Target: "a", control: ProxyReachable, Tasks: tcp("connect"), Judge: byRule(RuleBlocked)},
		{Check: EgressInternet, Target: "b", control: ProxyReachable, Tasks: tcp("connect"), Judge: byRule(RuleBlocked)},
	}
}

func TestRetriesOnlyInconclusive(t *testing.T) {
	// Try 1: the control fails, "a" was reached (a leak), "b" looks blocked.
	// Try 2: the control works and "a" looks blocked: "a" stays a failure,
	// and only the control and "b" are asked again.
	run, asked := scripted(
		map[string]probes.Outcome{"proxy": probes.Timeout, "a": probes.Connected, "b": probes.Timeout},
		map[string]probes.Outcome{"proxy": probes.Connected, "a": probes.Timeout, "b": probes.Timeout},
	)
	got, err := judgeWithRetries("fresh-run", retryPlans(), 1, run)
	require.NoError(t, err)
	assert.Equal(t, report.Pass, got[0].Status)
	assert.Equal(t, report.Fail, got[1].Status, "a target reached once is a failure")
	assert.Equal(t, report.Pass, got[2].Status)
	require.Len(t, *asked, 2)
	assert.ElementsMatch(t, []string{"proxy", "b"}, (*asked)[1])
}

func TestRetriesBounded(t *testing.T) {
	dead := map[string]probes.Outcome{"proxy": probes.Timeout, "a": probes.Timeout, "b": probes.Timeout}
	run, asked := scripted(dead, dead, dead, dead)
	got, err := judgeWithRetries("fresh-run", retryPlans(), 2, run)
	require.NoError(t, err)
	assert.Len(t, *asked, 3, "one try and two retries")
	for _, c := range got {
		assert.Equal(t, report.Inconclusive, c.Status)
	}
	// No retry when nothing was inconclusive.
	run, asked = scripted(map[string]probes.Outcome{"proxy": probes.Connected, "a": probes.Timeout, "b": probes.Timeout})
	_, err = judgeWithRetries("fresh-run", retryPlans(), 3, run)
	require.NoError(t, err)
	assert.Len(t, *asked, 1)
}

// A control that passed keeps its pass when it is asked again only to
// judge a retry.
func TestRetryKeepsEarlierPass(t *testing.T) {
	ps := []Planned{
		{Check: ProxyReachable, Target: "proxy", Tasks: tcp("connect"), Judge: byRule(RuleReached)},
		{Check: EgressProxyForward, Target: "connect", control: ProxyReachable,
			Tasks: []probes.Task{{ID: "connect", Kind: probes.KindHTTP}},
			Judge: func(rs Results) Judgement { return judgeNoTunnel(rs.Get("connect").Result) }},
	}
	run, asked := scripted(
		map[string]probes.Outcome{"proxy": probes.Connected, "connect": probes.Timeout},
		map[string]probes.Outcome{"proxy": probes.Timeout, "connect": probes.Timeout},
	)
	got, err := judgeWithRetries("fresh-run", ps, 1, run)
	require.NoError(t, err)
	require.Len(t, *asked, 2)
	assert.ElementsMatch(t, []string{"proxy", "connect"}, (*asked)[1])
	assert.Equal(t, report.Pass, got[0].Status)
	assert.Equal(t, report.Inconclusive, got[1].Status)
}
