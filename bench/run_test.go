package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/checks/checkstest"
	"github.com/ssebench-audit/ssebench-audit/internal/syncbuf"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// fakeSSEBench stands in for `ssebench run`: it writes summary.json where
// ssebench would, recording the egress it was asked for, after a while.
const fakeSSEBench = `#!/bin/sh
while [ $# -gt 0 ]; do
	case "$1" in
	--task) task=$2; shift ;;
	--run-id) rid=$2; shift ;;
	--egress) egress=$2; shift ;;
	esac
	shift
done
dir="$RESULTS/$task/model/agent/$rid"
mkdir -p "$dir"
sleep 0.2
printf '{"run_id":"%s","config":{"egress":"%s"}}' "$rid" "$egress" > "$dir/summary.json"
`

func options(t *testing.T, tasks ...string) Options {
	dir := t.TempDir()
	script := filepath.Join(dir, "ssebench")
	require.NoError(t, os.WriteFile(script, []byte(fakeSSEBench), 0o755))
	results := filepath.Join(dir, "results")
	return Options{Tasks: tasks, Agent: "a", Model: "m", Egress: "restricted", SSEBench: []string{script},
		Results: results, Jobs: 2, Env: append(os.Environ(), "RESULTS="+results), Poll: 10 * time.Millisecond,
		Audit: checks.Config{Projects: []string{"p"}, EgressTargets: []string{"198.51.100.2:80"}, DNSServers: []string{"198.51.100.2"},
			HostPorts: []int{2375}, ExternalNames: []string{"example.com"}}}
}

func fakeBackend() *checkstest.Backend {
	return &checkstest.Backend{Deployments: map[string]*checks.Deployment{"p": checkstest.Deployment("p")}, NewRuns: true}
}

// Each run: a gate, the run, an audit in flight, summary.json compared,
// audit.json beside it; the live display draws while runs write their
// results (run under -race).
func TestRunLoop(t *testing.T) {
	b := fakeBackend()
	o := options(t, "t1", "t2", "t3")
	screen := &syncbuf.Buffer{}
	o.Progress, o.Live = screen, true
	res := Run(context.Background(), b, o)
	require.Len(t, res.Runs, 3)
	assert.Equal(t, "pass", res.Verdict, "%+v", res.Runs[0])
	for _, rr := range res.Runs {
		assert.Equal(t, VerdictPass, rr.Verdict, "%s: %s", rr.Task, rr.Reason)
		require.NotNil(t, rr.Gate)
		require.NotNil(t, rr.InFlight)
		assert.Equal(t, report.VerdictPass, rr.Gate.Verdict)
		assert.Equal(t, report.VerdictPass, rr.InFlight.Verdict)
		assert.Equal(t, "restricted", rr.EgressSeen)
		require.NotNil(t, rr.EgressRecorded)
		assert.Equal(t, report.Pass, rr.EgressRecorded.Status)
		data, err := os.ReadFile(filepath.Join(rr.RunDir, "audit.json"))
		require.NoError(t, err)
		var written RunResult
		require.NoError(t, json.Unmarshal(data, &written))
		assert.Equal(t, rr.RunID, written.RunID)
		assert.Contains(t, screen.String(), rr.Task)
	}
	assert.Equal(t, 6, b.Sessions, "a gate and an in-flight audit per run")
	// Each run's own audit went inside it (a gate goes into the runs that
	// are live when it runs, too).
	for _, rr := range res.Runs {
		assert.Contains(t, b.InRuns, rr.RunID)
	}
}

// A failing gate starts no run; --fail-fast then starts no other.
func TestRunLoopBlocked(t *testing.T) {
	for _, failFast := range []bool{false, true} {
		b := fakeBackend()
		b.Deployments["p"].Agents.Internal = false
		o := options(t, "t1", "t2", "t3")
		o.Jobs, o.FailFast = 1, failFast
		res := Run(context.Background(), b, o)
		assert.Equal(t, "fail", res.Verdict)
		assert.Equal(t, 1, res.ExitCode)
		assert.Equal(t, VerdictBlocked, res.Runs[0].Verdict)
		assert.Contains(t, res.Runs[0].Reason, "gate verdict fail")
		assert.NotNil(t, res.Runs[0].Gate, "the blocked run keeps its gate report")
		_, err := os.Stat(o.Results)
		assert.True(t, os.IsNotExist(err), "no run was started")
		if failFast {
			assert.Equal(t, VerdictNotStarted, res.Runs[2].Verdict)
			assert.Equal(t, 1, b.Sessions, "one gate, then nothing")
		} else {
			assert.Equal(t, VerdictBlocked, res.Runs[2].Verdict)
		}
	}
}

// A run the results claim was open while the audit saw it restricted fails.
func TestRunLoopWrongEgress(t *testing.T) {
	b := fakeBackend()
	o := options(t, "t1")
	o.SSEBench = []string{"sh", "-c", strings.ReplaceAll(fakeSSEBench, `"$egress"`, `open`), "ssebench"}
	res := Run(context.Background(), b, o)
	assert.Equal(t, VerdictFail, res.Runs[0].Verdict, res.Runs[0].Reason)
	assert.Equal(t, "failed: "+checks.RunEgressRecorded, res.Runs[0].Reason)
}
