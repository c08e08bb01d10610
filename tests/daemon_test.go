package tests

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/fixtures"
	"github.com/ssebench-audit/ssebench-audit/fixtures/stub"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// An old daemon that serves the reference patch, has no grading gate and
// puts the patch in its public view is caught from the fresh run and from
// the other run; no report in any format contains the patch.
func TestOldDaemonFails(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 2, Mutants: []fixtures.Mutant{fixtures.OldDaemon}})
	port := closedPort(t)
	r := audit(t, d.Project, port)
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 1, r.code)
	leaky := d.Runs[0].RunID
	for _, id := range []string{checks.DaemonReferencePatch, checks.DaemonGradingGate, checks.DaemonPublicView} {
		failed := 0
		for _, c := range checksOf(r.report, d.Project, id) {
			// One row per daemon, asked from the fresh run and the other run.
			assert.Equal(t, []string{"fresh-run", "run:" + otherRun(d, c.Target)}, c.Vantages, "%s %s", id, c.Target)
			if strings.HasPrefix(c.Target, leaky+" ") {
				assert.Equal(t, report.Fail, c.Status, "%s %s: %s", id, c.Target, c.Observed)
				failed++
			} else {
				assert.Equal(t, report.Pass, c.Status, "%s %s %s: %s", id, c.Vantage, c.Target, c.Observed)
			}
		}
		assert.Equal(t, 1, failed, id)
	}
	// The finding names the daemon version and the patch's size and hash.
	for _, c := range checksOf(r.report, d.Project, checks.DaemonReferencePatch) {
		if c.Status == report.Fail {
			assert.Contains(t, c.Observed, "sha256:")
			assert.Contains(t, c.Observed, "daemon ")
		}
	}

	// Never the patch itself, in any format, on stdout, stderr or in a file.
	dir := t.TempDir()
	outputs := []string{r.stdout, r.stderr}
	for _, f := range []string{"table", "markdown", "junit", "json"} {
		file := filepath.Join(dir, "report."+f)
		args := append([]string{"audit", "--project", d.Project, "--format", f, "--output", file}, worldArgs(port)...)
		rr := runTool(t, nil, args...)
		assert.Equal(t, 1, rr.code)
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		outputs = append(outputs, rr.stdout, rr.stderr, string(b))
	}
	for i, o := range outputs {
		assert.NotContains(t, o, stub.PatchMarker, "output %d carries the leaked patch", i)
	}
	assertNoStateChanges(t, d)
}

// A hostile daemon (endless, slow, huge and reset answers, a route that
// never answers) costs the audit its timeouts, and never passes.
func TestHostileDaemonNeverPasses(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 2, Mutants: []fixtures.Mutant{fixtures.HostileDaemon}})
	r := audit(t, d.Project, closedPort(t), "--only", checks.DaemonReferencePatch, "--only", checks.DaemonGradingGate,
		"--only", checks.DaemonPublicView, "--only", checks.ProxyReachable)
	require.NotNil(t, r.report, r.stderr)
	assert.Contains(t, []int{1, 2}, r.code)
	hostile := d.Runs[0].RunID + " "
	seen := 0
	for _, p := range r.report.Projects {
		for _, c := range p.Checks {
			if strings.HasPrefix(c.Target, hostile) {
				seen++
				assert.Contains(t, []report.Status{report.Fail, report.Error}, c.Status, "%s %s: %s", c.ID, c.Vantage, c.Observed)
			}
		}
	}
	assert.Equal(t, 3, seen, "three checks of its daemon, one row each")
	for _, c := range checksOf(r.report, d.Project, checks.DaemonReferencePatch) {
		assert.Len(t, c.Vantages, 2, "asked from the fresh run and from the other run")
	}
	assertNoStateChanges(t, d)
}

// otherRun is the run ID of the run of two that is not the one a daemon
// target names.
func otherRun(d *fixtures.Deployment, target string) string {
	if strings.HasPrefix(target, d.Runs[0].RunID+" ") {
		return d.Runs[1].RunID
	}
	return d.Runs[0].RunID
}

// The correct deployment's daemons and admin sockets pass, and the audit
// sent no state-changing request and left no copied file in any run.
func TestDaemonsAndSocketsPass(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 2})
	r := audit(t, d.Project, closedPort(t))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code, "%v", failing(r.report))
	for _, id := range []string{checks.DaemonReferencePatch, checks.DaemonGradingGate, checks.DaemonPublicView,
		checks.SocketAdmin, checks.RunHardening} {
		s := statuses(r.report, d.Project, id)
		assert.NotZero(t, s[report.Pass], "%s: %v", id, s)
		assert.Zero(t, s[report.Fail]+s[report.Error]+s[report.Inconclusive], "%s: %v", id, s)
	}
	// Fresh run asks both daemons, each run asks the other one: one row per
	// daemon, naming both.
	patch := checksOf(r.report, d.Project, checks.DaemonReferencePatch)
	assert.Len(t, patch, 2)
	for _, c := range patch {
		assert.Equal(t, []string{"fresh-run", "run:" + otherRun(d, c.Target)}, c.Vantages)
	}
	for _, c := range checksOf(r.report, d.Project, checks.SocketAdmin) {
		if c.Target == "/run/ssebench/admin.sock" {
			assert.Contains(t, c.Observed, "connect as 1000:1000: denied")
		}
	}
	assertNoStateChanges(t, d)
	assertNothingCopiedLeft(t, d)
}

// Admin sockets out of root's sole reach are caught from inside the run:
// one the agent can connect to, and a world-writable one in a directory
// the agent cannot enter, seen as root (the agent cannot even stat it, but
// anything that reaches the directory, in sidecar mode a volume the
// agent's container shares, may connect).
func TestAdminSocketMutantsFail(t *testing.T) {
	for _, tc := range []struct {
		mutant           fixtures.Mutant
		message, observe string
	}{
		{fixtures.AdminSocketOpen, "connect() succeeded as 1000:1000", "connect as 1000:1000: connected"},
		{fixtures.AdminSocketLoose, "mode 0666", "stat as 1000:1000: denied"},
	} {
		t.Run(string(tc.mutant), func(t *testing.T) {
			t.Parallel()
			d := up(t, fixtures.Options{Runs: 1, Mutants: []fixtures.Mutant{tc.mutant}})
			r := audit(t, d.Project, closedPort(t), "--only", checks.SocketAdmin)
			require.NotNil(t, r.report, r.stderr)
			assert.Equal(t, 1, r.code, "%v", failing(r.report))
			assertFails(t, r.report, d.Project, checks.SocketAdmin, "in-container:"+d.Runs[0].RunID)
			for _, c := range checksOf(r.report, d.Project, checks.SocketAdmin) {
				if c.Target == fixtures.AdminSocket {
					assert.Equal(t, report.Fail, c.Status)
					assert.Contains(t, c.Message, tc.message)
					assert.Contains(t, c.Observed, tc.observe)
				}
			}
			assertNothingCopiedLeft(t, d)
		})
	}
}

// Runs with more power than an agent needs fail run.hardening.
func TestHardeningMutantsFail(t *testing.T) {
	for _, m := range []fixtures.Mutant{fixtures.CapAddRun, fixtures.DockerSocketRun} {
		t.Run(string(m), func(t *testing.T) {
			t.Parallel()
			d := up(t, fixtures.Options{Runs: 1, Mutants: []fixtures.Mutant{m}})
			r := audit(t, d.Project, closedPort(t), "--only", checks.RunHardening)
			require.NotNil(t, r.report, r.stderr)
			assert.Equal(t, 1, r.code)
			assertFails(t, r.report, d.Project, checks.RunHardening, "host")
		})
	}
}

// assertNoStateChanges asks each stand-in daemon (from the host, which
// reaches containers on internal networks) how many state-changing
// requests it received: an audit sends none.
func assertNoStateChanges(t *testing.T, d *fixtures.Deployment) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	for _, run := range d.Runs {
		resp, err := c.Get("http://" + net.JoinHostPort(run.IP, strconv.Itoa(fixtures.DaemonPort)) + stub.StateChangesPath)
		require.NoError(t, err)
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		var sc struct {
			Count    int      `json:"count"`
			Requests []string `json:"requests"`
		}
		require.NoError(t, json.Unmarshal(body, &sc), string(body))
		assert.Zero(t, sc.Count, "%s received %v", run.Name, sc.Requests)
	}
}

// assertNothingCopiedLeft: the in-container probe removed its copies.
func assertNothingCopiedLeft(t *testing.T, d *fixtures.Deployment, when ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, run := range d.Runs {
		changes, err := api.ContainerDiff(ctx, run.ID)
		require.NoError(t, err)
		for _, ch := range changes {
			assert.False(t, strings.HasPrefix(ch.Path, "/.sba-"), "%s still has %s %s", run.Name, ch.Path, strings.Join(when, " "))
		}
	}
}
