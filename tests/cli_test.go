package tests

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/fixtures"
)

// Bad input is a one-line error and exit 2, never a stack trace.
func TestBadInput(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  []string
		args []string
		want string
	}{
		"unknown flag":    {nil, []string{"audit", "--bogus"}, "unknown flag"},
		"bad project":     {nil, []string{"audit", "--project", "Not A Project"}, "invalid project name"},
		"bad env project": {[]string{"COMPOSE_PROJECT_NAME=UPPER"}, []string{"audit"}, "invalid project name"},
		"unknown format":  {nil, []string{"audit", "--format", "xml"}, "unknown --format"},
		"unknown check":   {nil, []string{"audit", "--only", "egress.nowhere"}, "unknown check ID"},
		"bad target":      {nil, []string{"audit", "--egress-target", "no-port"}, "invalid --egress-target"},
		"bad timeout":     {nil, []string{"audit", "--timeout", "soon"}, "invalid argument"},
		"bad live-run":    {nil, []string{"audit", "--live-run-probe", "ssh"}, "invalid --live-run-probe"},
		// Values that were silently replaced by defaults once.
		"zero timeout":     {nil, []string{"audit", "--timeout", "0"}, "--timeout must be more than 0"},
		"negative timeout": {nil, []string{"audit", "--timeout", "-1s"}, "--timeout must be more than 0"},
		"negative workers": {nil, []string{"audit", "--workers", "-3"}, "--workers must be at least 1"},
		// An audit of nothing passed once, with exit 0.
		"no check left":   {nil, []string{"audit", "--only", "dns.proxy", "--skip", "dns.proxy"}, "no check left to run"},
		"gate of nothing": {nil, []string{"gate", "--only", "audit.probe"}, "no check left to run"},
		// A report that cannot be written was found out after the audit.
		"output nowhere":      {nil, []string{"audit", "--output", "/nonexistent/dir/report.json"}, "--output /nonexistent/dir/report.json: cannot write there"},
		"output a directory":  {nil, []string{"audit", "--output", "/tmp"}, "is a directory"},
		"attestation nowhere": {nil, []string{"gate", "--attestation", "/nonexistent/a.json"}, "--attestation /nonexistent/a.json: cannot write there"},
		"unknown schema":      {nil, []string{"schema", "yaml"}, `unknown schema "yaml"`},
		"checks format":       {nil, []string{"checks", "--format", "xml"}, `unknown --format "xml"`},
		"no engine":           {[]string{"DOCKER_HOST=unix:///nonexistent/docker.sock"}, []string{"audit"}, "cannot reach the engine: Cannot connect to the Docker daemon"},
		"unknown command":     {nil, []string{"frobnicate"}, "unknown command"},
	} {
		r := runTool(t, tc.env, tc.args...)
		assert.Equal(t, 2, r.code, name)
		assert.Contains(t, r.stderr, tc.want, name)
		assert.Equal(t, 1, strings.Count(strings.TrimRight(r.stderr, "\n"), "\n")+1, "%s: one line: %q", name, r.stderr)
		assert.NotContains(t, r.stderr, "goroutine", name)
		assert.Empty(t, r.stdout, name)
	}
}

// Every report format renders a real audit: JUnit parses with one testcase
// per check, the checklist ticks, the table ends with the verdict.
func TestReportFormats(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 1})
	dir := t.TempDir()
	port := closedPort(t)
	for _, f := range []string{"junit", "markdown", "table"} {
		out := filepath.Join(dir, "report."+f)
		args := append([]string{"audit", "--project", d.Project, "--format", f, "--output", out}, worldArgs(port)...)
		r := runTool(t, nil, args...)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, 0, r.code, "%s\n%s", r.stderr, b)
		assert.Empty(t, r.stdout, "--output writes the file only")
		switch f {
		case "junit":
			var suites struct {
				Suites []struct {
					Tests int `xml:"tests,attr"`
					Cases []struct {
						Name    string    `xml:"name,attr"`
						Failure *struct{} `xml:"failure"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			require.NoError(t, xml.Unmarshal(b, &suites))
			require.Len(t, suites.Suites, 1)
			assert.Equal(t, suites.Suites[0].Tests, len(suites.Suites[0].Cases))
			assert.Greater(t, len(suites.Suites[0].Cases), 10)
			for _, c := range suites.Suites[0].Cases {
				assert.Nil(t, c.Failure, c.Name)
			}
		case "markdown":
			assert.Contains(t, string(b), "- [x] The agents network is internal")
			assert.NotContains(t, string(b), "- [ ]")
		case "table":
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			assert.True(t, strings.HasPrefix(lines[len(lines)-1], "verdict: pass"), lines[len(lines)-1])
		}
	}
}

// An audit interrupted at any point (SIGINT or SIGTERM) removes every probe
// container it made, and says what it did not check.
func TestInterruptLeavesNothing(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 2})
	port := closedPort(t)
	for _, tc := range []struct {
		sig   syscall.Signal
		delay time.Duration
	}{
		{syscall.SIGINT, 100 * time.Millisecond},
		{syscall.SIGINT, 700 * time.Millisecond},
		{syscall.SIGTERM, 1500 * time.Millisecond},
		{syscall.SIGINT, 2500 * time.Millisecond},
	} {
		args := append([]string{"audit", "--format", "json", "--project", d.Project}, worldArgs(port)...)
		cmd := exec.Command(binary, append(args, "--timeout", "3s")...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Start())
		time.Sleep(tc.delay)
		require.NoError(t, cmd.Process.Signal(tc.sig))
		err := cmd.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s after %s: the audit cannot pass", tc.sig, tc.delay)
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == tc.sig {
			// On a loaded machine the signal can come while the Go runtime
			// and the packages' init still run, before main asks for it:
			// the process then dies of it, as any program would, having
			// done nothing (seen at 63 ms with the cores busy).
			assert.Zero(t, out.Len()+errb.Len(), "it died of %s before doing anything", tc.sig)
		} else {
			assert.Equal(t, 2, ee.ExitCode(), "%s after %s: %s", tc.sig, tc.delay, errb.String())
		}
		if out.Len() > 0 {
			assert.Contains(t, out.String(), "interrupted", "the partial report says so")
		}
		assert.Zero(t, probesOf(t, d.Project), "%s after %s left probe containers", tc.sig, tc.delay)
		assertNothingCopiedLeft(t, d, fmt.Sprint(tc.sig, " after ", tc.delay))
		assertNoProbeRunning(t, d, fmt.Sprint(tc.sig, " after ", tc.delay))
	}

	// Interrupted while its probe runs inside a run, with probe timeouts
	// that outlast the audit's own cleanup: that probe is stopped too.
	args := append([]string{"audit", "--format", "json", "--project", d.Project}, worldArgs(port)...)
	cmd := startUntilProbeRuns(t, d, append(args, "--timeout", "15s")...)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	_ = cmd.Wait()
	assert.Zero(t, probesOf(t, d.Project))
	assertNothingCopiedLeft(t, d, "interrupted in a run")
	assertNoProbeRunning(t, d, "interrupted in a run")
}

// `cleanup` removes what a crashed (SIGKILLed) audit left behind.
func TestCleanupAfterCrash(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 1})
	args := append([]string{"audit", "--project", d.Project}, worldArgs(closedPort(t))...)
	cmd := exec.Command(binary, append(args, "--timeout", "5s")...)
	require.NoError(t, cmd.Start())
	// Kill it once its probes exist: nothing of the audit runs after SIGKILL.
	deadline := time.Now().Add(30 * time.Second)
	for probesOf(t, d.Project) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.NotZero(t, probesOf(t, d.Project), "the crash left probes to clean")

	r := runTool(t, nil, "cleanup", "--project", d.Project)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "removed")
	assert.Zero(t, probesOf(t, d.Project))

	// Killed while its probe runs inside the run, with timeouts that keep
	// that probe going: its copies and the probe itself are left, and
	// cleanup stops the one and removes the others.
	cmd = startUntilProbeRuns(t, d, append(args, "--timeout", "30s")...)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.True(t, probeRunning(t, d), "the crash left a probe running in the run")
	r = runTool(t, nil, "cleanup", "--project", d.Project)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "removed 3 files copied into runs")
	assertNoProbeRunning(t, d, "after cleanup")
	assertNothingCopiedLeft(t, d, "after cleanup")
	assert.Zero(t, probesOf(t, d.Project))
}

// startUntilProbeRuns starts the tool and returns once its probe runs
// inside one of the deployment's runs.
func startUntilProbeRuns(t *testing.T, d *fixtures.Deployment, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary, args...)
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(time.Minute)
	for !probeRunning(t, d) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, probeRunning(t, d), "the audit's probe ran in a run")
	return cmd
}

// probesOf counts the probe containers of audits of one project.
func probesOf(t *testing.T, project string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := api.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(
		filters.Arg("label", "ssebench-audit.probe"), filters.Arg("label", "ssebench-audit.project="+project))})
	require.NoError(t, err)
	return len(list)
}
