package checks

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// scripted answers each try with outcomes by probe check+target.
func scripted(tries ...map[string]probes.Outcome) (func([]Probe) (probes.Report, error), *[][]string) {
	var asked [][]string
	n := 0
	return func(ps []Probe) (probes.Report, error) {
		if n >= len(tries) {
			return probes.Report{}, errors.New("no more tries")
		}
		answers := tries[n]
		n++
		var rep probes.Report
		var names []string
		planOf(ps, 0) // numbers the tasks as the prober does
		for _, p := range ps {
			names = append(names, p.Target)
			for _, t := range p.Tasks {
				rep.Results = append(rep.Results, probes.Result{ID: t.ID, Kind: t.Kind, Outcome: answers[p.Target]})
			}
		}
		asked = append(asked, names)
		return rep, nil
	}, &asked
}

func retryProbes() []Probe {
	return []Probe{
		{Check: catalogue.ProxyReachable, Target: "proxy", Rule: RuleReached, Tasks: []probes.Task{{Kind: probes.KindTCP}}},
		{Check: catalogue.EgressInternet, Target: "a", Rule: RuleBlocked, Control: catalogue.ProxyReachable, Tasks: []probes.Task{{Kind: probes.KindTCP}}},
		{Check: catalogue.EgressInternet, Target: "b", Rule: RuleBlocked, Control: catalogue.ProxyReachable, Tasks: []probes.Task{{Kind: probes.KindTCP}}},
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
	got, err := judgeWithRetries("fresh-run", retryProbes(), 1, run)
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
	got, err := judgeWithRetries("fresh-run", retryProbes(), 2, run)
	require.NoError(t, err)
	assert.Len(t, *asked, 3, "one try and two retries")
	for _, c := range got {
		assert.Equal(t, report.Inconclusive, c.Status)
	}
	// No retry when nothing was inconclusive.
	run, asked = scripted(map[string]probes.Outcome{"proxy": probes.Connected, "a": probes.Timeout, "b": probes.Timeout})
	_, err = judgeWithRetries("fresh-run", retryProbes(), 3, run)
	require.NoError(t, err)
	assert.Len(t, *asked, 1)
}

// A control that passed keeps its pass when it is asked again only to
// judge a retry.
func TestRetryKeepsEarlierPass(t *testing.T) {
	ps := []Probe{
		{Check: catalogue.ProxyReachable, Target: "proxy", Rule: RuleReached, Tasks: []probes.Task{{Kind: probes.KindTCP}}},
		{Check: catalogue.EgressProxyForward, Target: "connect", Rule: RuleNoTunnel, Control: catalogue.ProxyReachable,
			Tasks: []probes.Task{{Kind: probes.KindHTTP}}},
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
