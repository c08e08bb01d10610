package checks_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/checks/checkstest"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// The cross-run checks grow with the runs, not with their pairs: every
// daemon is asked from the fresh run and from a bounded sample of runs,
// and the report has one row per daemon and check.
func TestCrossRunChecksAreLinear(t *testing.T) {
	for _, n := range []int{2, 10, 100} {
		var ids []string
		for i := range n {
			ids = append(ids, fmt.Sprintf("r%03d", i))
		}
		b := fake(ids...)
		rep := audit(t, b, config())
		require.Equal(t, report.VerdictPass, rep.Verdict, "n=%d", n)
		asked := b.Asked["http /reference/patch"]
		assert.LessOrEqual(t, asked, (1+checks.PeerSample)*n, "n=%d: each daemon from the fresh run and the sample", n)
		assert.GreaterOrEqual(t, asked, 2*n, "n=%d: and from at least one run", n)
		patch := rows(rep, checks.DaemonReferencePatch, "")
		assert.Len(t, patch, n, "one row per daemon")
		for _, c := range patch {
			assert.Contains(t, c.Vantages, "fresh-run")
			assert.GreaterOrEqual(t, len(c.Vantages), 2, "%s: also from a run", c.Target)
		}
		assert.Len(t, b.InRuns, n, "every run checked from inside")
	}
}

// A daemon that leaks to one vantage is a failure on its one row, shown
// from there.
func TestMergedRowShowsTheWorst(t *testing.T) {
	b := fake("ra", "rb", "rc")
	b.Answer = func(w checkstest.Where, task probes.Task) probes.Result {
		if task.Target == "/reference/patch" && task.Address == "10.9.1.3:4263" && w.Vantage == "in-run:ra" {
			return probes.Result{Outcome: probes.Response, Connected: true, HTTP: &probes.HTTPResult{Status: 200, BodySHA256: "patch"}}
		}
		return checkstest.Correct(w, task)
	}
	rep := audit(t, b, config())
	assert.Equal(t, report.VerdictFail, rep.Verdict)
	var failed []report.Check
	for _, c := range rows(rep, checks.DaemonReferencePatch, "") {
		if c.Status == report.Fail {
			failed = append(failed, c)
		}
	}
	require.Len(t, failed, 1)
	assert.Equal(t, "run:ra", failed[0].Vantage)
	assert.Contains(t, failed[0].Vantages, "fresh-run")
	assert.Contains(t, failed[0].Target, "rb")
}

// The report says what the audit cost: one probe of its own and one exec
// per run, and tasks that grow with the runs.
func TestCostGrowsWithTheRuns(t *testing.T) {
	var per []float64
	for _, n := range []int{10, 100} {
		var ids []string
		for i := range n {
			ids = append(ids, fmt.Sprintf("r%03d", i))
		}
		rep := audit(t, fake(ids...), config())
		require.NotNil(t, rep.Cost)
		assert.Equal(t, 1, rep.Cost.Probes, "n=%d: the fresh run only", n)
		assert.Equal(t, n, rep.Cost.RunExecs, "n=%d", n)
		per = append(per, float64(rep.Cost.TasksSent)/float64(n))
	}
	assert.InDelta(t, per[0], per[1], per[0]*0.2, "tasks per run stay flat from 10 to 100 runs: %v", per)
}
