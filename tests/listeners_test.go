package tests

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/fixtures"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// A run whose agent-side OpenCode listens on all interfaces is driven by
// every other run: isolation.runs fails for it, naming port, uid and
// process, as seen from the fresh run and from the runs that sample it.
// The other runs' OpenCode, on loopback, passes; nothing is left in any run.
func TestExposedOpenCodeFails(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 3, Mutants: []fixtures.Mutant{fixtures.ExposedOpenCode}})
	r := audit(t, d.Project, closedPort(t), "--only", checks.IsolationRuns, "--only", checks.ProxyReachable)
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 1, r.code, "%v", failing(r.report))
	// Go binds 0.0.0.0 as a dual-stack [::]: either is all interfaces.
	exposed := regexp.MustCompile("^" + regexp.QuoteMeta(d.Runs[0].RunID) + ` (0\.0\.0\.0|\[::\]):4096/tcp uid 1000`)
	var found bool
	for _, c := range checksOf(r.report, d.Project, checks.IsolationRuns) {
		switch {
		case exposed.MatchString(c.Target):
			found = true
			assert.Equal(t, report.Fail, c.Status, c.Observed)
			assert.Contains(t, c.Target, "opencode", "the process is named")
			assert.Contains(t, c.Observed, "connected")
			assert.Equal(t, []string{"fresh-run", "run:" + d.Runs[1].RunID, "run:" + d.Runs[2].RunID}, c.Vantages)
		case c.Vantage == "in-container:"+d.Runs[0].RunID:
			assert.Equal(t, report.Pass, c.Status, "%s: %s", c.Target, c.Observed)
			assert.Contains(t, c.Observed, ":4096/tcp uid 1000 (likely ", "named by the port in its command line")
			assert.Contains(t, c.Observed, "probed from other runs")
		case strings.HasPrefix(c.Vantage, "in-container:"):
			assert.Equal(t, report.Pass, c.Status, "%s: %s", c.Target, c.Observed)
			assert.Contains(t, c.Observed, "127.0.0.1:4096/tcp uid 1000")
			assert.Contains(t, c.Observed, ": loopback")
		default:
			t.Errorf("unexpected row %s %s: %s %s", c.Vantage, c.Target, c.Status, c.Observed)
		}
	}
	assert.True(t, found, "no row for the exposed OpenCode")
	assertNothingCopiedLeft(t, d)
}
