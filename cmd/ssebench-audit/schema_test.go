package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/report"
	"github.com/ssebench-audit/ssebench-audit/schema"
)

func runSchemaCmd(t *testing.T, stdin io.Reader, args ...string) (string, error) {
	t.Helper()
	cmd := newSchemaCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	if stdin != nil {
		cmd.SetIn(stdin)
	}
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

func TestSchemaCmdPrints(t *testing.T) {
	for _, args := range [][]string{nil, {"report"}, {"attestation"}, {"bench"}, {"run"}} {
		name := "report"
		if len(args) == 1 {
			name = args[0]
		}
		want, err := schema.Get(name)
		require.NoError(t, err)
		out, err := runSchemaCmd(t, nil, args...)
		require.NoError(t, err, args)
		assert.Equal(t, string(want), out, args)
	}
	assert.Equal(t, schema.Names(), newSchemaCmd().ValidArgs)
}

func TestSchemaCmdRejectsArgs(t *testing.T) {
	_, err := runSchemaCmd(t, nil, "sarif")
	require.EqualError(t, err, `unknown schema "sarif" (known: attestation, bench, report, run)`)
	_, err = runSchemaCmd(t, nil, "report", "bench")
	require.Error(t, err)
}

func schemaCmdReport(t *testing.T) []byte {
	t.Helper()
	r := &report.Report{Tool: report.Tool{Name: "ssebench-audit", Version: version}, StartedAt: time.Now().UTC(),
		Projects: []report.Project{{Name: "ssebench", Checks: []report.Check{{ID: "network.agents.internal",
			Status: report.Pass, Vantage: "host", Target: "ssebench_agents", Expected: "internal: true", Observed: "internal: true"}}}}}
	r.Finalize(false)
	var b bytes.Buffer
	require.NoError(t, report.RenderJSON(&b, r))
	return b.Bytes()
}

func TestSchemaCmdValidatesFile(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(good, schemaCmdReport(t), 0o644))
	require.NoError(t, os.WriteFile(bad, bytes.Replace(schemaCmdReport(t), []byte(`"pass"`), []byte(`"passed"`), 1), 0o644))

	out, err := runSchemaCmd(t, nil, "--validate", good)
	require.NoError(t, err)
	assert.Equal(t, good+": valid\n", out)

	out, err = runSchemaCmd(t, nil, "report", "--validate", bad)
	require.Error(t, err)
	assert.Empty(t, out)
	assert.True(t, strings.HasPrefix(err.Error(), bad+": does not match the report schema: at '/verdict'"), err.Error())

	// A report is not an attestation.
	_, err = runSchemaCmd(t, nil, "attestation", "--validate", good)
	require.ErrorContains(t, err, "missing properties")

	_, err = runSchemaCmd(t, nil, "--validate", filepath.Join(dir, "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestSchemaCmdValidatesStdin(t *testing.T) {
	out, err := runSchemaCmd(t, bytes.NewReader(schemaCmdReport(t)), "report", "--validate", "-")
	require.NoError(t, err)
	assert.Equal(t, "stdin: valid\n", out)

	_, err = runSchemaCmd(t, strings.NewReader("not json"), "--validate", "-")
	require.ErrorContains(t, err, "stdin: not a JSON document")
}

// endless is a stdin that never ends: the read must stop at the bound.
type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

func TestSchemaCmdBoundsStdin(t *testing.T) {
	_, err := runSchemaCmd(t, endless{}, "--validate", "-")
	require.EqualError(t, err, "stdin: more than 67108864 bytes")
}
