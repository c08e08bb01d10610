package validate_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/bench"
	"github.com/ssebench-audit/ssebench-audit/report"
	"github.com/ssebench-audit/ssebench-audit/schema"
	"github.com/ssebench-audit/ssebench-audit/schema/validate"
)

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 123456789, time.UTC)

// sample has every status and every optional field the model has.
func sample() *report.Report {
	c := func(id string, s report.Status, vantage string) report.Check {
		return report.Check{ID: id, Status: s, Vantage: vantage, Target: "ssebench_agents",
			Expected: "blocked", Observed: "timeout", Message: "why", DurationMS: 3}
	}
	warn := c("proxy.published", report.Warn, "host")
	warn.Remedy = "bind the proxy to 127.0.0.1"
	r := &report.Report{
		Tool:       report.Tool{Name: "ssebench-audit", Version: "1.4.0"},
		Engine:     report.Engine{Version: "20.10.24", APIVersion: "1.41"},
		Backend:    "docker",
		AuditID:    "a1b2c3",
		StartedAt:  t0,
		DurationMS: 4321,
		Strict:     true,
		Notes:      []string{"2 leftover audit probes found"},
		Projects: []report.Project{
			{Name: "ssebench", AddressFamilies: []string{"ipv4", "ipv6"}, Checks: []report.Check{
				c("network.agents.internal", report.Pass, "host"),
				c("egress.internet", report.Fail, "fresh-run"),
				warn,
				c("dns.external", report.Inconclusive, "run:r-1"),
				c("daemon.reference-patch", report.Error, "run:r-1"),
				c("socket.admin", report.Skip, "in-container:r-1"),
			}},
		},
	}
	r.Finalize(false)
	return r
}

func reportJSON(t *testing.T, r *report.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, report.RenderJSON(&b, r))
	return b.Bytes()
}

// requireDescribed: valid, and no field the code wrote is missing from the
// schema.
func requireDescribed(t *testing.T, name string, doc []byte) {
	t.Helper()
	require.NoError(t, validate.Validate(name, doc))
	require.Empty(t, validate.Undescribed(name, doc), "fields the code writes but the %s schema does not declare", name)
}

func TestNames(t *testing.T) {
	require.Equal(t, []string{"attestation", "bench", "report", "run"}, schema.Names())
}

func TestSchemasArePublishable(t *testing.T) {
	for _, name := range schema.Names() {
		t.Run(name, func(t *testing.T) {
			text, err := schema.Get(name)
			require.NoError(t, err)
			var s map[string]any
			require.NoError(t, json.Unmarshal(text, &s))
			assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", s["$schema"])
			assert.Equal(t, schema.Base+name+".schema.json", s["$id"])
			assert.NotEmpty(t, s["title"])
			assert.Contains(t, s["description"], "Fields may be added")
			checkOpenAndDescribed(t, name, s)
			// A schema that does not compile fails every document with
			// another error than a mismatch.
			err = validate.Validate(name, []byte(`{"runs": [{}]}`))
			require.ErrorContains(t, err, "does not match the "+name+" schema: ")
		})
	}
}

// checkOpenAndDescribed: consumers must be able to read later versions, so
// nothing forbids unknown keys; and every property says what it means.
func checkOpenAndDescribed(t *testing.T, where string, v any) {
	switch v := v.(type) {
	case map[string]any:
		assert.NotContains(t, v, "additionalProperties", where)
		assert.NotContains(t, v, "unevaluatedProperties", where)
		if props, ok := v["properties"].(map[string]any); ok {
			for k, p := range props {
				pm, _ := p.(map[string]any)
				_, desc := pm["description"]
				_, ref := pm["$ref"]
				assert.True(t, desc || ref, "%s.properties.%s has no description", where, k)
			}
		}
		for k, c := range v {
			checkOpenAndDescribed(t, where+"."+k, c)
		}
	case []any:
		for _, c := range v {
			checkOpenAndDescribed(t, where+"[]", c)
		}
	}
}

func TestGetUnknown(t *testing.T) {
	_, err := schema.Get("sarif")
	require.EqualError(t, err, `unknown schema "sarif" (known: attestation, bench, report, run)`)
	require.Error(t, validate.Validate("sarif", []byte("{}")))
	require.NotEmpty(t, validate.Undescribed("sarif", []byte("{}")))
}

func TestReportAsRendered(t *testing.T) {
	requireDescribed(t, "report", reportJSON(t, sample()))
	// RenderJSON writes a project without checks as [].
	r := sample()
	r.Projects = append(r.Projects, report.Project{Name: "empty"})
	requireDescribed(t, "report", reportJSON(t, r))
	// The smallest report the code writes: no project, nothing optional.
	empty := &report.Report{StartedAt: t0}
	empty.Finalize(true)
	requireDescribed(t, "report", reportJSON(t, empty))
}

func TestAttestationAsWritten(t *testing.T) {
	evidence := []*report.Evidence{
		{EngineID: "ABCD:EFGH", ProbeImage: "ssebench-audit-probe:3f9a", ProbeImageID: "sha256:3f9a", EndedAt: t0.Add(time.Second),
			Networks: []report.NetworkRef{{Project: "ssebench", Name: "ssebench_agents", ID: "n1", Internal: true}}},
		{}, // no network found, no probe run
	}
	for _, ev := range evidence {
		var b bytes.Buffer
		require.NoError(t, report.WriteAttestation(&b, report.NewAttestation(sample(), ev)))
		requireDescribed(t, "attestation", b.Bytes())
	}
}

// A project whose checks were all filtered out (--only) has nil Checks:
// every writer, not only RenderJSON, writes them as [] as the contract says
// (the attestation and bench's JSON wrote null once).
func TestEmptyProjectOutsideRenderJSON(t *testing.T) {
	r := sample()
	r.Projects = append(r.Projects, report.Project{Name: "empty"})
	var b bytes.Buffer
	require.NoError(t, report.WriteAttestation(&b, report.NewAttestation(r, &report.Evidence{})))
	requireDescribed(t, "attestation", b.Bytes())
	b.Reset()
	require.NoError(t, bench.RenderJSON(&b, &bench.Result{Project: "p", Verdict: "pass", Runs: []*bench.RunResult{
		{Task: "t", RunID: "sba-t-0a1b2c3d", Verdict: bench.VerdictPass, Gate: r, InFlight: r}}}))
	requireDescribed(t, "bench", b.Bytes())
}

func sampleBench() *bench.Result {
	gate, inFlight := sample(), sample()
	recorded := report.Check{ID: "run.egress-recorded", Status: report.Pass, Vantage: "host", Target: "sba-t1-0a1b2c3d",
		Expected: "config.egress = restricted (what the audit saw)", Observed: "config.egress = restricted"}
	return &bench.Result{Project: "ssebench", Verdict: "fail", ExitCode: report.ExitFail, Runs: []*bench.RunResult{
		{Task: "t1", RunID: "sba-t1-0a1b2c3d", Agent: "claude", Model: "m", Egress: "restricted", Verdict: bench.VerdictFail,
			Reason: "failed: egress.internet", Container: "ssebench-run-1", EgressSeen: "restricted", Gate: gate,
			InFlight: inFlight, EgressRecorded: &recorded, RunDir: "results/t1/m/claude/sba-t1-0a1b2c3d",
			OutputTail: "done\n", StartedAt: t0, DurationMS: 60000},
		{Task: "t2", RunID: "sba-t2-0a1b2c3d", Agent: "claude", Model: "m", Egress: "restricted", Verdict: bench.VerdictBlocked,
			Reason: "gate verdict fail: run not started", ExitCode: -1, Gate: gate, StartedAt: t0, DurationMS: 10},
		// Stopped by fail-fast before its gate: only what Run fills in.
		{Task: "t3", RunID: "sba-t3-0a1b2c3d", Verdict: bench.VerdictNotStarted, ExitCode: -1,
			Reason: "stopped before its gate (fail-fast or interrupt)"},
	}}
}

func TestBenchAsRendered(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, bench.RenderJSON(&b, sampleBench()))
	requireDescribed(t, "bench", b.Bytes())
}

// audit.json beside a run's summary.json is one RunResult.
func TestRunAsAuditJSON(t *testing.T) {
	for _, rr := range sampleBench().Runs {
		doc, err := json.MarshalIndent(rr, "", "  ")
		require.NoError(t, err)
		requireDescribed(t, "run", doc)
	}
}

// edit renders the sample report, changes it, and renders it again.
func edit(t *testing.T, change func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(reportJSON(t, sample()), &m))
	change(m)
	doc, err := json.Marshal(m)
	require.NoError(t, err)
	return doc
}

func firstCheck(m map[string]any) map[string]any {
	return m["projects"].([]any)[0].(map[string]any)["checks"].([]any)[0].(map[string]any)
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name   string
		change func(m map[string]any)
		want   []string
	}{
		{"bad status", func(m map[string]any) { firstCheck(m)["status"] = "passed" }, []string{"/projects/0/checks/0/status", "pass"}},
		{"missing verdict", func(m map[string]any) { delete(m, "verdict") }, []string{"verdict", "missing"}},
		{"duration as string", func(m map[string]any) { m["duration_ms"] = "12" }, []string{"/duration_ms", "integer"}},
		{"bad timestamp", func(m map[string]any) { m["started_at"] = "yesterday" }, []string{"/started_at", "date-time"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := validate.Validate("report", edit(t, tc.change))
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "\n")
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// A report nested in a bench result is located as deeply as it is: the
// "or null" branch of gate must not hide the real problem.
func TestValidateNamesNestedPlace(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, bench.RenderJSON(&b, sampleBench()))
	var m map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &m))
	firstCheck(m["runs"].([]any)[0].(map[string]any)["gate"].(map[string]any))["status"] = "ok"
	doc, err := json.Marshal(m)
	require.NoError(t, err)
	err = validate.Validate("bench", doc)
	require.Error(t, err)
	assert.Regexp(t, `^does not match the bench schema: at '/runs/0/gate/projects/0/checks/0/status': `, err.Error())
}

func TestValidateNotJSON(t *testing.T) {
	require.ErrorContains(t, validate.Validate("report", []byte(`{"tool":`)), "not a JSON document")
	require.ErrorContains(t, validate.Validate("report", []byte(`{} {}`)), "not a JSON document")
}

// Unknown keys are accepted (the contract lets fields be added) but listed;
// title is declared ahead of the code that writes it.
func TestUndescribedNamesExtraKeys(t *testing.T) {
	doc := edit(t, func(m map[string]any) {
		m["extra"] = 1
		firstCheck(m)["title"] = "the agents network is internal"
		firstCheck(m)["foo"] = map[string]any{"bar": true}
		m["summary"].(map[string]any)["flaky"] = 0
	})
	require.NoError(t, validate.Validate("report", doc))
	require.Equal(t, []string{"extra", "projects[].checks[].foo", "summary.flaky"}, validate.Undescribed("report", doc))
	require.Equal(t, []string{"error: not a JSON document: unexpected EOF"}, validate.Undescribed("report", []byte("{")))
}
