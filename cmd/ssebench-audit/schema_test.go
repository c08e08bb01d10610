package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/schema"
)

func runSchemaCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newSchemaCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
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
		out, err := runSchemaCmd(t, args...)
		require.NoError(t, err, args)
		assert.Equal(t, string(want), out, args)
	}
	assert.Equal(t, schema.Names(), newSchemaCmd().ValidArgs)
}

func TestSchemaCmdRejectsArgs(t *testing.T) {
	_, err := runSchemaCmd(t, "sarif")
	require.EqualError(t, err, `unknown schema "sarif" (known: attestation, bench, report, run)`)
	_, err = runSchemaCmd(t, "report", "bench")
	require.Error(t, err)
}
