package checks_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/checks/checkstest"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// A correct deployment: each run's listeners are read from inside it, the
// loopback ones pass, 4263 is left to the daemon checks, and nothing more
// is probed: no second probe, every waiting probe just removes its copies.
func TestIsolationRunsCorrect(t *testing.T) {
	b := fake("ra", "rb", "rc")
	rep := audit(t, b, config())
	assert.Equal(t, report.VerdictPass, rep.Verdict)
	rs := rows(rep, checks.IsolationRuns, "")
	require.Len(t, rs, 3, "one row per run")
	for _, c := range rs {
		assert.Equal(t, report.Pass, c.Status)
		assert.True(t, strings.HasPrefix(c.Vantage, "in-container:"), c.Vantage)
		assert.Contains(t, c.Observed, "127.0.0.1:4096/tcp uid 1000 (opencode serve (pid 7)): loopback")
		assert.Contains(t, c.Message, "judged by the daemon.* checks")
	}
	assert.Equal(t, []checkstest.Where{{Vantage: "fresh-run"}}, b.Probes, "no second probe")
	assert.ElementsMatch(t, []string{"ra", "rb", "rc"}, b.Finished, "every waiting probe finished")
}

// exposing makes run rb's OpenCode listen on all interfaces, and answer.
func exposing(b *checkstest.Backend, port int, uid int) {
	b.Listeners = func(run checks.Container) []probes.Listener {
		ls := checkstest.CorrectListeners(run)
		if run.RunID == "rb" {
			ls = append(ls, probes.Listener{Proto: "tcp", Address: "0.0.0.0", Port: port, UID: uid, Process: "server (pid 9)"})
		}
		return ls
	}
	b.Answer = func(w checkstest.Where, task probes.Task) probes.Result {
		if task.Kind == probes.KindTCP && task.Address == "10.9.1.3:"+strconv.Itoa(port) {
			return probes.Result{Outcome: probes.Connected}
		}
		return checkstest.Correct(w, task)
	}
}

// An exposed OpenCode is reached from the fresh run (a second probe, only
// because there is something to probe) and from the runs that sample rb:
// one failing row for it, naming them.
func TestIsolationRunsExposed(t *testing.T) {
	b := fake("ra", "rb", "rc")
	exposing(b, 4096, 1000)
	rep := audit(t, b, config())
	assert.Equal(t, report.VerdictFail, rep.Verdict)
	var exposed []report.Check
	for _, c := range rows(rep, checks.IsolationRuns, "") {
		if strings.HasPrefix(c.Target, "rb 0.0.0.0:4096") {
			exposed = append(exposed, c)
		}
	}
	require.Len(t, exposed, 1, "one row for the listener")
	c := exposed[0]
	assert.Equal(t, report.Fail, c.Status)
	assert.Contains(t, c.Message, "OpenCode")
	assert.Contains(t, c.Target, "uid 1000 (server (pid 9))")
	assert.Equal(t, []string{"fresh-run", "run:ra", "run:rc"}, c.Vantages, "the fresh run and both runs that sample rb")
	assert.NotEmpty(t, c.Remedy)
	assert.Equal(t, []checkstest.Where{{Vantage: "fresh-run"}, {Vantage: "fresh-run"}}, b.Probes, "one more probe for the fresh run")
	assert.ElementsMatch(t, []string{"ra", "rb", "rc"}, b.Finished)
}

// Anything else reached warns; a server of the agent's own uid fails.
func TestIsolationRunsRules(t *testing.T) {
	for _, tc := range []struct {
		port, uid int
		want      report.Status
	}{
		{8080, 0, report.Warn},
		{3000, 0, report.Warn},
		{8080, 1000, report.Fail},
		{4098, 0, report.Fail},
	} {
		b := fake("ra", "rb", "rc")
		exposing(b, tc.port, tc.uid)
		rep := audit(t, b, config())
		found := false
		for _, c := range rows(rep, checks.IsolationRuns, "") {
			if strings.HasPrefix(c.Target, "rb 0.0.0.0:") {
				found = true
				assert.Equal(t, tc.want, c.Status, "%d uid %d: %s", tc.port, tc.uid, c.Message)
			}
		}
		assert.True(t, found, "%d", tc.port)
	}
}
