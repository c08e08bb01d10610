package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	assert.Equal(t, 4, b.Sessions, "one gate for all three starts (nothing changed), an in-flight audit per run")
	assert.Equal(t, res.Runs[0].GateID, res.Runs[2].GateID)
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
		assert.Contains(t, res.Runs[0].Reason, "verdict fail: run not started: network.agents.internal fail (p_agents): the agents network has a route out")
		assert.NotNil(t, res.Runs[0].Gate, "the blocked run keeps its gate report")
		entries, _ := os.ReadDir(o.Results)
		assert.Len(t, entries, 1, "no run was started: only the gate's evidence is written")
		evidence, err := os.ReadFile(filepath.Join(o.Results, "ssebench-audit", res.Runs[0].RunID, "audit.json"))
		require.NoError(t, err)
		assert.Contains(t, string(evidence), `"verdict": "blocked"`)
		assert.Contains(t, string(evidence), res.Runs[0].GateID)
		if failFast {
			assert.Equal(t, VerdictNotStarted, res.Runs[2].Verdict)
			assert.Equal(t, 1, b.Sessions, "one gate, then nothing")
		} else {
			assert.Equal(t, 1, b.Sessions, "one gate vouches for (against) every start")
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

// Twelve tasks, four at a time, on a correct deployment: every run starts;
// one gate vouches for them all (nothing changed), and each run is
// examined from inside once, by its own audit: what the engine is asked
// grows with the tasks, not with tasks times jobs.
func TestGateShared(t *testing.T) {
	b := fakeBackend()
	var tasks []string
	for i := range 12 {
		tasks = append(tasks, fmt.Sprintf("t%02d", i))
	}
	o := options(t, tasks...)
	o.Jobs = 4
	res := Run(context.Background(), b, o)
	require.Equal(t, "pass", res.Verdict)
	gates := map[string]bool{}
	for _, rr := range res.Runs {
		assert.Equal(t, VerdictPass, rr.Verdict, rr.Reason)
		gates[rr.GateID] = true
	}
	assert.Len(t, gates, 1, "one gate")
	assert.Len(t, b.Probes, 1, "the gate's fresh-run probe; in-flight audits make none")
	assert.Len(t, b.InRuns, 12, "one exec into each run, by its own audit")
}

// A change to the project's networks that is not one of the benchmark's
// runs ends the gate's validity: the next start gets a new gate, which
// says why the deployment now fails. The benchmark's own run joining the
// network changes nothing.
func TestGateInvalidatedByChange(t *testing.T) {
	b := fakeBackend()
	b.Events = make(chan checks.Change)
	o := options(t, "t1", "t2", "t3")
	o.Jobs = 1
	go func() {
		// While run 1 is live: its own connect, then a stranger's.
		for len(b.Locked(func() any { return b.InRuns }).([]string)) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		own := b.Locked(func() any { return b.InRuns[0] }).(string)
		b.Events <- checks.Change{What: "connect", Network: "p_agents", Container: "sse-" + own, RunID: own}
		b.Locked(func() any {
			d := b.Deployments["p"]
			d.Agents.Members = append(d.Agents.Members, checks.Member{ID: "99", Name: "stray", Address: "10.9.0.99", Known: true})
			return nil
		})
		b.Events <- checks.Change{What: "connect", Network: "p_agents", Container: "stray"}
	}()
	res := Run(context.Background(), b, o)
	assert.Equal(t, VerdictPass, res.Runs[0].Verdict, res.Runs[0].Reason)
	for _, rr := range res.Runs[1:] {
		assert.Equal(t, VerdictBlocked, rr.Verdict)
		assert.Contains(t, rr.Reason, "network.agents.members fail (stray): unexpected member")
		assert.NotEqual(t, res.Runs[0].GateID, rr.GateID, "a new gate")
	}
	assert.Equal(t, res.Runs[1].GateID, res.Runs[2].GateID, "nothing changed after it: shared")
}

// A gate that erred (a probe that could not run) is run again before it
// blocks a start.
func TestGateRetriesErrors(t *testing.T) {
	b := fakeBackend()
	b.ProbeErr, b.ProbeFailures = errors.New("starting the probe container: timeout"), 1
	o := options(t, "t1")
	res := Run(context.Background(), b, o)
	assert.Equal(t, VerdictPass, res.Runs[0].Verdict, res.Runs[0].Reason)
	assert.Len(t, b.Probes, 2, "the gate's probe failed once, then passed")
	assert.Contains(t, strings.Join(res.Runs[0].Gate.Notes, "\n"), "gate 1 of 3 erred (audit.probe error (probe container): this vantage point could not be probed")
}

// A gate is valid for GateMaxAge at most.
func TestGateMaxAge(t *testing.T) {
	b := fakeBackend()
	o := options(t, "t1", "t2")
	o.Jobs, o.GateMaxAge = 1, time.Nanosecond
	res := Run(context.Background(), b, o)
	assert.NotEqual(t, res.Runs[0].GateID, res.Runs[1].GateID)
}

// A run that ended before its in-flight audit could look from its own
// namespace or from inside was not audited in flight: an error, whatever
// its host checks say.
func TestRunEndedBeforeExamined(t *testing.T) {
	b := fakeBackend()
	discovered := 0
	b.OnDiscover = func(d *checks.Deployment) {
		// Discoveries: the gate's, the in-flight audit's, and its look
		// again at what ended. The run ends once its audit has begun.
		switch discovered++; discovered {
		case 2:
			b.InRunErr = errors.New("running the probe: container is not running")
			b.ProbeErr = errors.New("starting the probe container: cannot join network of a non running container")
		case 3:
			for i := range d.Runs {
				d.Runs[i].Running = false
			}
		}
	}
	o := options(t, "t1")
	res := Run(context.Background(), b, o)
	rr := res.Runs[0]
	require.NotNil(t, rr.InFlight)
	assert.Equal(t, report.VerdictPass, rr.InFlight.Verdict, "what could not be probed of an ended run is not judged")
	assert.Equal(t, VerdictError, rr.Verdict)
	assert.Equal(t, "the run ended before it could be audited from its own namespace or from inside", rr.Reason)
}

// The benchmark's own run joining and leaving the network is expected: the
// gate stays valid for the next start.
func TestGateIgnoresOwnRuns(t *testing.T) {
	b := fakeBackend()
	b.Events = make(chan checks.Change)
	o := options(t, "t1", "t2")
	o.Jobs = 1
	go func() {
		for len(b.Locked(func() any { return b.InRuns }).([]string)) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		own := b.Locked(func() any { return b.InRuns[0] }).(string)
		b.Events <- checks.Change{What: "connect", Network: "p_agents", Container: "sse-" + own, RunID: own}
		b.Events <- checks.Change{What: "connect", Network: "p_agents", Container: "probe", Probe: true}
		b.Events <- checks.Change{What: "disconnect", Network: "p_agents", Container: "sse-" + own, RunID: own}
	}()
	res := Run(context.Background(), b, o)
	require.Equal(t, "pass", res.Verdict)
	assert.Equal(t, res.Runs[0].GateID, res.Runs[1].GateID, "one gate for both starts")
}
