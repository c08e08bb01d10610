package probes

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One exec does it all: the network plan runs, each user is tried, and the
// copies go, whatever the users' runs came to.
func TestInRunRunsRootPlanAndRemovesCopies(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	network := writePlan(t, dir, ".sba-network.json", Plan{TimeoutMS: 1000, Tasks: []Task{{ID: "f", Kind: KindFile, Path: target}}})
	passwd := filepath.Join(dir, "passwd")
	require.NoError(t, os.WriteFile(passwd, []byte("root:x:0:0::/root:/bin/sh\n"), 0o644))

	m := InRun{Exe: "/nonexistent", Plan: network, Users: []string{"model"}, Passwd: passwd,
		RootPlan: network, Remove: []string{network}}.Run(context.Background())

	require.NotNil(t, m.Root, m.RootError)
	require.Len(t, m.Root.Results, 1)
	assert.Equal(t, "f", m.Root.Results[0].ID)
	require.NotNil(t, m.Root.Results[0].File)
	require.Len(t, m.Users, 1)
	assert.Equal(t, "no such user", m.Users[0].Error)
	assert.True(t, m.Removed, m.Error)
	assert.NoFileExists(t, network)
}

// What went wrong is said where it went wrong; nothing not copied by the
// audit is removed.
func TestInRunReportsFailures(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "not-a-copy")
	require.NoError(t, os.WriteFile(kept, nil, 0o600))

	m := InRun{Exe: "/nonexistent", Plan: "/nonexistent", RootPlan: filepath.Join(dir, "missing.json"),
		Remove: []string{kept}}.Run(context.Background())

	assert.Nil(t, m.Root)
	assert.Contains(t, m.RootError, "missing.json")
	assert.False(t, m.Removed)
	assert.NotEmpty(t, m.Error)
	assert.FileExists(t, kept)

	// Without a network plan, no network report and no error about one.
	m = InRun{Exe: "/nonexistent", Plan: "/nonexistent"}.Run(context.Background())
	assert.Nil(t, m.Root)
	assert.Empty(t, m.RootError)
	assert.False(t, m.Removed)
}

func writePlan(t *testing.T, dir, name string, p Plan) string {
	t.Helper()
	data, err := json.Marshal(p)
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}
