package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/bench"
	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/fixtures"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// The gate exits as the audit does and writes an attestation that binds
// the report to this engine, these networks and this probe image.
func TestGateWritesAttestation(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 1})
	att := filepath.Join(t.TempDir(), "attestation.json")
	args := append([]string{"gate", "--project", d.Project, "--attestation", att, "--format", "junit"}, worldArgs(closedPort(t))...)
	r := runTool(t, nil, args...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "<testsuites")

	b, err := os.ReadFile(att)
	require.NoError(t, err)
	requireSchema(t, "attestation", b)
	var a report.Attestation
	require.NoError(t, json.Unmarshal(b, &a))
	info, err := api.Info(context.Background())
	require.NoError(t, err)
	assert.Equal(t, info.ID, a.Engine.ID)
	assert.NotEmpty(t, a.Engine.Version)
	assert.Equal(t, "ssebench-audit", a.Tool.Name)
	ids := map[string]string{}
	for _, n := range a.Networks {
		ids[n.Name] = n.ID
	}
	assert.Equal(t, map[string]string{d.Agents.Name: d.Agents.ID, d.Default.Name: d.Default.ID}, ids)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, a.ProbeImage.ID)
	assert.False(t, a.EndedAt.Before(a.StartedAt))
	require.NotNil(t, a.Report)
	assert.Equal(t, report.VerdictPass, a.Report.Verdict)
	assert.Equal(t, 0, a.ExitCode)

	// A failing gate still attests, with exit 1.
	d2 := up(t, fixtures.Options{Mutants: []fixtures.Mutant{fixtures.ForeignMember}})
	args = append([]string{"gate", "--project", d2.Project, "--attestation", att, "--only", checks.NetworkAgentsMembers}, worldArgs(closedPort(t))...)
	r = runTool(t, nil, args...)
	assert.Equal(t, 1, r.code)
	b, err = os.ReadFile(att)
	require.NoError(t, err)
	requireSchema(t, "attestation", b)
	require.NoError(t, json.Unmarshal(b, &a))
	assert.Equal(t, report.VerdictFail, a.Verdict)
}

// benchEnv is the stand-in's environment. Its runs last 12 s: long enough
// that a loaded machine audits each in flight before it ends (a run that
// ends first was not audited from inside, an error).
func benchEnv(t *testing.T, misbehave string) []string {
	return []string{"SBA_FIXTURE_IMAGE=" + image, "SBA_UPSTREAM_DNS=" + world.Address,
		"SBA_FIXTURE_LABEL=e2e/" + t.Name(), "SBA_RUN_SECONDS=12", "SBA_MISBEHAVE=" + misbehave}
}

// runBench runs `ssebench-audit bench` in dir with the stand-in.
func runBench(t *testing.T, dir, project string, env []string, extra ...string) (int, *bench.Result, string) {
	t.Helper()
	args := append([]string{"bench", "--project", project, "--agent", "fixture-agent", "--model", "fixture/model",
		"--ssebench", ssebench, "--results", filepath.Join(dir, "results"), "--format", "json"}, worldArgs(closedPort(t))...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append(args, extra...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	var res bench.Result
	if json.Unmarshal(out.Bytes(), &res) != nil {
		return code, nil, errb.String()
	}
	requireSchema(t, "bench", out.Bytes())
	return code, &res, errb.String()
}

// readAuditJSON reads the audit.json of a run.
func readAuditJSON(t *testing.T, rr *bench.RunResult) bench.RunResult {
	t.Helper()
	require.NotEmpty(t, rr.RunDir, "no run directory for %s", rr.RunID)
	b, err := os.ReadFile(filepath.Join(rr.RunDir, "audit.json"))
	require.NoError(t, err)
	requireSchema(t, "run", b)
	var a bench.RunResult
	require.NoError(t, json.Unmarshal(b, &a))
	return a
}

// Two tasks on a correct deployment both run, each gated and audited in
// flight, each with audit.json beside its summary.json.
func TestBenchRunsGatedTasks(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{})
	dir := t.TempDir()
	code, res, stderr := runBench(t, dir, d.Project, benchEnv(t, ""), "--task", "task-a", "--task", "task-b", "--jobs", "2")
	require.NotNil(t, res, stderr)
	assert.Equal(t, 0, code, stderr)
	require.Len(t, res.Runs, 2)
	for _, rr := range res.Runs {
		assert.Equal(t, bench.VerdictPass, rr.Verdict, "%s: %s", rr.Task, rr.Reason)
		assert.Equal(t, 0, rr.ExitCode)
		assert.FileExists(t, filepath.Join(rr.RunDir, "summary.json"))
		a := readAuditJSON(t, rr)
		require.NotNil(t, a.Gate)
		require.NotNil(t, a.InFlight)
		assert.Equal(t, report.VerdictPass, a.Gate.Verdict)
		assert.Equal(t, report.VerdictPass, a.InFlight.Verdict, "%v", failing(a.InFlight))
		assert.Equal(t, "restricted", a.EgressSeen)
		assert.Equal(t, report.Pass, a.EgressRecorded.Status)
		// The in-flight audit looked from the run's own namespace and from inside.
		vantages := map[string]bool{}
		for _, c := range a.InFlight.Projects[0].Checks {
			vantages[c.Vantage] = true
		}
		assert.True(t, vantages["run:"+rr.RunID], "%v", vantages)
		assert.True(t, vantages["in-container:"+rr.RunID], "%v", vantages)
	}
	assert.Zero(t, runContainers(t, d.Project))
}

// On a broken deployment no run starts.
func TestBenchBlocksOnFailingGate(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Mutants: []fixtures.Mutant{fixtures.DBOnAgents}})
	dir := t.TempDir()
	code, res, stderr := runBench(t, dir, d.Project, benchEnv(t, ""), "--task", "task-a", "--task", "task-b", "--fail-fast")
	require.NotNil(t, res, stderr)
	assert.Equal(t, 1, code)
	assert.Equal(t, bench.VerdictBlocked, res.Runs[0].Verdict)
	assert.Contains(t, []string{bench.VerdictBlocked, bench.VerdictNotStarted}, res.Runs[1].Verdict)
	for _, rr := range res.Runs {
		assert.Equal(t, -1, rr.ExitCode, "ssebench run was never started")
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "results", "*", "*", "*", "*", "summary.json"))
	assert.Empty(t, matches)
}

// A run that misbehaves (attached to the default network while it reports
// restricted, or recording the wrong egress) is caught.
func TestBenchCatchesMisbehavingRuns(t *testing.T) {
	for _, tc := range []struct {
		misbehave, check string
	}{
		{"attach-default", checks.RunNetworks},
		{"wrong-egress", checks.RunEgressRecorded},
	} {
		t.Run(tc.misbehave, func(t *testing.T) {
			t.Parallel()
			d := up(t, fixtures.Options{})
			code, res, stderr := runBench(t, t.TempDir(), d.Project, benchEnv(t, tc.misbehave), "--task", "task-a")
			require.NotNil(t, res, stderr)
			assert.Equal(t, 1, code)
			rr := res.Runs[0]
			assert.Equal(t, bench.VerdictFail, rr.Verdict, rr.Reason)
			assert.Contains(t, rr.Reason, tc.check)
			a := readAuditJSON(t, rr)
			failed := a.EgressRecorded != nil && a.EgressRecorded.ID == tc.check && a.EgressRecorded.Status == report.Fail
			if a.InFlight != nil {
				for _, c := range a.InFlight.Projects[0].Checks {
					failed = failed || (c.ID == tc.check && c.Status == report.Fail)
				}
			}
			assert.True(t, failed, "audit.json records the %s failure", tc.check)
		})
	}
}

// A deployment that breaks during run 1 blocks run 2.
func TestBenchCatchesDrift(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{})
	code, res, stderr := runBench(t, t.TempDir(), d.Project, benchEnv(t, "break-stack"), "--task", "task-a", "--task", "task-b")
	require.NotNil(t, res, stderr)
	assert.Equal(t, 1, code)
	assert.Equal(t, 0, res.Runs[0].ExitCode, "run 1 was started")
	assert.Equal(t, bench.VerdictBlocked, res.Runs[1].Verdict, res.Runs[1].Reason)
	assert.Equal(t, -1, res.Runs[1].ExitCode)
	// The network connect ended the first gate's validity: a new gate says why.
	assert.NotEqual(t, res.Runs[0].GateID, res.Runs[1].GateID)
	assert.Contains(t, res.Runs[1].Reason, checks.NetworkAgentsMembers)
}

// Twelve tasks, four at a time, on a correct deployment: every run starts,
// gates are shared, and what the engine is asked grows with the tasks: one
// exec into each run (its own audit's) and a probe container per gate,
// not per run and live run.
func TestBenchSharesGates(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{})
	var args []string
	for i := range 12 {
		args = append(args, "--task", fmt.Sprintf("task-%02d", i))
	}
	code, res, stderr := runBench(t, t.TempDir(), d.Project, benchEnv(t, ""), append(args, "--jobs", "4")...)
	require.NotNil(t, res, stderr)
	assert.Equal(t, 0, code, stderr)
	gates := map[string]*report.Report{}
	execs := 0
	for _, rr := range res.Runs {
		if !assert.Equal(t, bench.VerdictPass, rr.Verdict, "%s: %s", rr.Task, rr.Reason) && rr.InFlight != nil {
			t.Logf("%s in flight: %v", rr.Task, failing(rr.InFlight))
		}
		require.NotNil(t, rr.Gate)
		gates[rr.GateID] = rr.Gate
		require.NotNil(t, rr.InFlight)
		require.NotNil(t, rr.InFlight.Cost)
		execs += rr.InFlight.Cost.RunExecs + rr.InFlight.Cost.Probes
	}
	probes := 0
	for _, g := range gates {
		require.NotNil(t, g.Cost)
		probes += g.Cost.Probes + g.Cost.RunExecs
	}
	t.Logf("12 runs: %d gates, %d probes of the gates, %d execs and probes in flight", len(gates), probes, execs)
	assert.LessOrEqual(t, len(gates), 2, "gates are shared: nothing changed but the runs (a slow machine may see the max age pass once)")
	assert.Equal(t, len(gates), probes, "a gate probes from the fresh run only")
	assert.Equal(t, 12, execs, "each run once, by its own audit")
}

// Ctrl-C stops the ssebench child with one SIGINT, and what was audited is
// still written.
func TestBenchInterrupt(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{})
	dir := t.TempDir()
	args := append([]string{"bench", "--project", d.Project, "--agent", "a", "--model", "m", "--task", "task-a",
		"--ssebench", ssebench, "--results", filepath.Join(dir, "results"), "--format", "json"}, worldArgs(closedPort(t))...)
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), benchEnv(t, "")...)
	var out bytes.Buffer
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	// Interrupt once the run's container is up.
	deadline := time.Now().Add(time.Minute)
	for runContainers(t, d.Project) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	_ = cmd.Wait()
	var res bench.Result
	require.NoError(t, json.Unmarshal(out.Bytes(), &res), out.String())
	requireSchema(t, "bench", out.Bytes())
	rr := res.Runs[0]
	assert.Equal(t, bench.VerdictInterrupted, rr.Verdict)
	assert.Equal(t, 130, rr.ExitCode, "ssebench run exits 130 on one SIGINT")
	matches, _ := filepath.Glob(filepath.Join(dir, "results", "ssebench-audit", rr.RunID, "audit.json"))
	if rr.RunDir != "" {
		matches, _ = filepath.Glob(filepath.Join(rr.RunDir, "audit.json"))
	}
	assert.Len(t, matches, 1, "audit.json written")
	assert.Zero(t, runContainers(t, d.Project))
	assert.Zero(t, probesOf(t, d.Project))
}

// runContainers counts the live run containers of a project's stand-in.
func runContainers(t *testing.T, project string) int {
	t.Helper()
	list, err := api.ContainerList(context.Background(), container.ListOptions{All: true, Filters: filters.NewArgs(
		filters.Arg("label", "ssebench.run-id"), filters.Arg("label", "ssebench-audit.fixture.project="+project))})
	require.NoError(t, err)
	return len(list)
}
