package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRenderUnknownFormat(t *testing.T) {
	var b bytes.Buffer
	err := Render(&b, "yaml", sampleReport(), Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"yaml"`)
	for _, f := range []string{"json", "junit", "markdown", "table"} {
		assert.Contains(t, err.Error(), f)
	}
	assert.Zero(t, b.Len(), "nothing written on error")
}

func TestFormats(t *testing.T) {
	assert.Equal(t, []string{"json", "junit", "markdown", "table"}, Formats())
}

func TestJSONRoundTrip(t *testing.T) {
	want := sampleReport()
	var b strings.Builder
	require.NoError(t, RenderJSON(&b, want))
	out := b.String()

	var got Report
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, *want, got)

	// The contract's names, spelled as the README's JSON report spells them.
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, k := range []string{"tool", "engine", "started_at", "duration_ms", "verdict", "summary", "projects"} {
		assert.Contains(t, raw, k)
	}
	check := raw["projects"].([]any)[0].(map[string]any)["checks"].([]any)[1].(map[string]any)
	for _, k := range []string{"id", "status", "vantage", "target", "expected", "observed", "message", "duration_ms"} {
		assert.Contains(t, check, k)
	}
	assert.Equal(t, "network.agents.internal", check["id"], "checks keep their given order")
}

func TestJSONEmptyArrays(t *testing.T) {
	r := &Report{Projects: []Project{{Name: "p"}}}
	out := render(t, "json", r)
	assert.Contains(t, out, `"checks": []`)
	out = render(t, "json", &Report{})
	assert.Contains(t, out, `"projects": []`)
}

// parsed JUnit, read independently of the writer's types.
type xSuites struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Classname string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Failure   *struct {
				Type string `xml:"type,attr"`
				Text string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Type string `xml:"type,attr"`
			} `xml:"error"`
			Skipped   *struct{} `xml:"skipped"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitCounts(t *testing.T) {
	for _, strict := range []bool{false, true} {
		r := sampleReport()
		if strict {
			r = strictReport()
		}
		var doc xSuites
		require.NoError(t, xml.Unmarshal([]byte(render(t, "junit", r)), &doc))

		s := r.Summary
		failures := s.Fail
		if strict {
			failures += s.Warn
		}
		assert.Equal(t, s.Total(), doc.Tests, "strict=%v", strict)
		assert.Equal(t, failures, doc.Failures, "strict=%v", strict)
		assert.Equal(t, s.Error+s.Inconclusive, doc.Errors, "strict=%v", strict)
		assert.Equal(t, s.Skip, doc.Skipped, "strict=%v", strict)

		require.Len(t, doc.Suites, 2)
		var cases, fails, errs, skips int
		for i, suite := range doc.Suites {
			assert.Equal(t, r.Projects[i].Name, suite.Name)
			assert.Len(t, suite.Cases, suite.Tests)
			cases += len(suite.Cases)
			for _, c := range suite.Cases {
				if c.Failure != nil {
					fails++
				}
				if c.Error != nil {
					errs++
				}
				if c.Skipped != nil {
					skips++
				}
			}
		}
		assert.Equal(t, doc.Tests, cases)
		assert.Equal(t, doc.Failures, fails)
		assert.Equal(t, doc.Errors, errs)
		assert.Equal(t, doc.Skipped, skips)

		// The warning on proxy.published: a passing case with output, or a failure.
		c := doc.Suites[0].Cases[6]
		assert.Equal(t, "ssebench.proxy.published", c.Classname)
		assert.Equal(t, "proxy.published [host → ssebench-litellm-1]", c.Name)
		if strict {
			require.NotNil(t, c.Failure)
			assert.Equal(t, "warn", c.Failure.Type)
		} else {
			assert.Nil(t, c.Failure)
			assert.True(t, strings.HasPrefix(c.SystemOut, "warning: "), c.SystemOut)
		}
		// Hostile evidence survives CDATA, escaped, in one piece.
		hard := doc.Suites[1].Cases[1]
		require.NotNil(t, hard.Failure)
		assert.Contains(t, hard.Failure.Text, "observed: privileged; label note=\\x1b[31mhi|`x`\\x1b[0m]]>\n")

		inc := doc.Suites[0].Cases[8]
		require.NotNil(t, inc.Error)
		assert.Equal(t, "inconclusive", inc.Error.Type)
	}
}

func TestMarkdownItems(t *testing.T) {
	lines := strings.Split(render(t, "markdown", sampleReport()), "\n")
	has := func(want string) {
		t.Helper()
		assert.Contains(t, lines, want)
	}
	has("- Verdict: **fail** — 5 pass, 3 fail, 2 warn, 1 inconclusive, 1 error, 2 skip")
	has("## Project `ssebench`")
	has(`- [x] The agents network \<project\>\_agents exists`)
	has("- [ ] The agents network is internal (no route out)")
	has("  - **fail** `host` → `ssebench_agents`: internal: false — the agents network has a route out")
	has("- [ ] No internet target can be reached over TCP")
	has("- [x] The proxy's host port is bound to loopback ⚠")
	has("  - Fix: Set LITELLM\\_BIND=127.0.0.1 in deploy/compose/.env and run `docker compose up -d litellm`.")
	has("- [ ] No run's daemon serves the reference patch on port 4263")
	has("- [ ] No host service answers on the gateway or the host's addresses")
	has("- [ ] The daemon's admin socket is root-only and out of the agent's reach (not checked: no live run to copy the probe into)")
	has("- [x] lab.custom")
	// Hostile evidence: escapes shown, markup neutralised.
	has("  - **fail** `host` → `staging-run-9`: privileged; label note=\\\\x1b\\[31mhi\\|\\`x\\`\\\\x1b\\[0m\\]\\]\\> — a run container is privileged")

	// A catalogue entry the sample never checks sits under "not covered",
	// and nowhere as a checklist item.
	has("- Containers of other Compose projects cannot be reached (`isolation.projects`)")
	for _, l := range lines {
		assert.NotContains(t, l, "- [ ] Containers of other Compose projects", "unchecked entries are not items")
		assert.NotContains(t, l, "- [x] Containers of other Compose projects", "unchecked entries are not items")
	}
}

func TestMarkdownCode(t *testing.T) {
	assert.Equal(t, "`a`", mdCode("a"))
	assert.Equal(t, "``a`b``", mdCode("a`b"))
	assert.Equal(t, "`` `a ``", mdCode("`a"))
	assert.Equal(t, "`a|b`", mdCode("a|b"))
}

func TestTableOrder(t *testing.T) {
	out := render(t, "table", sampleReport())
	fail := strings.Index(out, "| FAIL ")
	pass := strings.Index(out, "| PASS ")
	require.NotEqual(t, -1, fail)
	require.NotEqual(t, -1, pass)
	assert.Less(t, fail, pass, "a fail row comes before a pass row")

	// Within one check ID the fail row still comes first.
	failRow := regexp.MustCompile(`(?m)^\| FAIL +\| egress\.internet `).FindStringIndex(out)
	passRow := regexp.MustCompile(`(?m)^\| PASS +\| egress\.internet `).FindStringIndex(out)
	require.NotNil(t, failRow)
	require.NotNil(t, passRow)
	assert.Less(t, failRow[0], passRow[0])

	// Long evidence: truncated in the cell, whole in the block.
	assert.Contains(t, out, "| "+truncate(longObserved, cellMax)+" |")
	assert.Contains(t, out, "  observed: "+longObserved+"\n")
	assert.NotContains(t, out, "\x1b", "no escape sequence reaches the terminal")

	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	assert.Equal(t, "verdict: fail — 5 pass, 3 fail, 2 warn, 1 inconclusive, 1 error, 2 skip", lines[len(lines)-1])
}

func TestClean(t *testing.T) {
	assert.Equal(t, `a\x1b[0m b`, clean("a\x1b[0m\nb", false))
	assert.Equal(t, "a\nb", clean("a\nb", true))
	assert.Equal(t, `x\u202ey`, clean("x\u202ey", false))
	assert.Equal(t, `\xff`, clean("\xff", false))
	assert.Equal(t, "naïve …", clean("naïve …", false))
	assert.Equal(t, "abc", truncate("abc", 3))
	assert.Equal(t, "ab…", truncate("abcd", 3))
}

func TestFinalize(t *testing.T) {
	cases := []struct {
		name     string
		statuses []Status
		strict   bool
		fatal    bool
		verdict  Verdict
		exit     int
	}{
		{"empty", nil, false, false, VerdictError, ExitError},
		{"only skips", []Status{Skip, Skip}, false, false, VerdictError, ExitError},
		{"all pass", []Status{Pass, Pass}, false, false, VerdictPass, ExitPass},
		{"skip passes", []Status{Pass, Skip}, false, false, VerdictPass, ExitPass},
		{"warn passes", []Status{Pass, Warn}, false, false, VerdictPass, ExitPass},
		{"warn fails when strict", []Status{Pass, Warn}, true, false, VerdictFail, ExitFail},
		{"strict without warn", []Status{Pass}, true, false, VerdictPass, ExitPass},
		{"fail", []Status{Pass, Fail}, false, false, VerdictFail, ExitFail},
		{"fail beats error", []Status{Error, Fail}, false, false, VerdictFail, ExitFail},
		{"fail beats inconclusive", []Status{Inconclusive, Fail}, false, false, VerdictFail, ExitFail},
		{"fail beats fatal", []Status{Fail}, false, true, VerdictFail, ExitFail},
		{"error beats inconclusive", []Status{Inconclusive, Error}, false, false, VerdictError, ExitError},
		{"inconclusive", []Status{Pass, Inconclusive, Warn}, false, false, VerdictInconclusive, ExitInconclusive},
		{"fatal is error", []Status{Pass}, false, true, VerdictError, ExitError},
		{"fatal beats inconclusive", []Status{Inconclusive}, false, true, VerdictError, ExitError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var checks []Check
			for _, s := range tc.statuses {
				checks = append(checks, Check{ID: "x", Status: s})
			}
			// Split over two projects: the summary spans all of them.
			half := len(checks) / 2
			r := &Report{Strict: tc.strict, Projects: []Project{
				{Name: "a", Checks: checks[:half]}, {Name: "b", Checks: checks[half:]},
			}}
			r.Summary.Pass = 99 // stale counts are replaced, not added to
			r.Finalize(tc.fatal)
			assert.Equal(t, tc.verdict, r.Verdict)
			assert.Equal(t, tc.exit, r.ExitCode())
			assert.Equal(t, countChecks(checks), r.Summary)
			assert.Equal(t, len(tc.statuses), r.Summary.Total())
		})
	}
}

func TestExitCodeUnknownVerdict(t *testing.T) {
	r := &Report{Verdict: "bogus"}
	assert.Equal(t, ExitError, r.ExitCode())
}

func TestStatusRank(t *testing.T) {
	assert.Less(t, Fail.Rank(), Error.Rank())
	assert.Less(t, Error.Rank(), Inconclusive.Rank())
	assert.Less(t, Inconclusive.Rank(), Warn.Rank())
	assert.Less(t, Warn.Rank(), Pass.Rank())
	assert.Less(t, Pass.Rank(), Skip.Rank())
	assert.Equal(t, len(Statuses), Status("bogus").Rank())
}

// Daemon findings are grouped by the run whose daemon answered.
func TestTableGroupsDaemonsByRun(t *testing.T) {
	r := &Report{Projects: []Project{{Name: "p", Checks: []Check{
		{ID: "daemon.reference-patch", Status: Fail, Vantage: "fresh-run", Target: "run-b 10.0.0.3:4263"},
		{ID: "daemon.grading-gate", Status: Pass, Vantage: "fresh-run", Target: "run-a 10.0.0.2:4263"},
		{ID: "daemon.reference-patch", Status: Fail, Vantage: "run:run-a", Target: "run-b 10.0.0.3:4263"},
		{ID: "daemon.reference-patch", Status: Pass, Vantage: "fresh-run", Target: "run-a 10.0.0.2:4263"},
	}}}}
	r.Finalize(false)
	var b strings.Builder
	require.NoError(t, RenderTable(&b, r))
	out := b.String()
	i := strings.Index(out, "daemons by run:")
	require.GreaterOrEqual(t, i, 0, out)
	section := out[i:]
	a, bb := strings.Index(section, "run-a 10.0.0.2:4263"), strings.Index(section, "run-b 10.0.0.3:4263")
	require.True(t, a >= 0 && bb > a, section)
	assert.Contains(t, section[bb:], "daemon.reference-patch   fail from fresh-run, fail from run:run-a")
}

// A daemon's row folded from several vantage points names them all.
func TestTableDaemonVantages(t *testing.T) {
	r := &Report{Projects: []Project{{Name: "p", Checks: []Check{
		{ID: "daemon.reference-patch", Status: Pass, Vantage: "fresh-run", Vantages: []string{"fresh-run", "run:ra"}, Target: "rb 10.0.0.3:4263"},
	}}}}
	r.Finalize(false)
	out := render(t, "table", r)
	assert.Contains(t, out, "daemon.reference-patch   pass from fresh-run, run:ra")
}
