package probes

import (
	"bytes"
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

// With a second round, the first line comes before anything is removed,
// the second carries the second plan's report and the removal.
func TestInRunServeTwoRounds(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	copied := writePlan(t, dir, ".sba-root.json", Plan{TimeoutMS: 1000, Tasks: []Task{{ID: "f", Kind: KindFile, Path: target}}})
	second, _ := json.Marshal(Plan{TimeoutMS: 1000, Tasks: []Task{{ID: "g", Kind: KindFile, Path: target}}})

	var out bytes.Buffer
	in := InRun{Exe: "/nonexistent", Plan: copied, RootPlan: copied, Remove: []string{copied}}
	require.NoError(t, in.Serve(context.Background(), bytes.NewReader(append(second, '\n')), &out))
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 2)
	first, err := ParseMultiReport(bytes.NewReader(lines[0]), 1<<20)
	require.NoError(t, err)
	require.NotNil(t, first.Root)
	assert.False(t, first.Removed, "nothing removed before the second round")
	last, err := ParseMultiReport(bytes.NewReader(lines[1]), 1<<20)
	require.NoError(t, err)
	require.NotNil(t, last.Then)
	assert.Equal(t, "g", last.Then.Results[0].ID)
	assert.True(t, last.Removed, last.Error)
	assert.NoFileExists(t, copied)

	// No second plan (the host closed stdin): the copies still go.
	copied = writePlan(t, dir, ".sba-root2.json", Plan{TimeoutMS: 1000})
	out.Reset()
	in = InRun{Exe: "/nonexistent", Plan: copied, RootPlan: copied, Remove: []string{copied}}
	require.NoError(t, in.Serve(context.Background(), bytes.NewReader(nil), &out))
	lines = bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 2)
	last, err = ParseMultiReport(bytes.NewReader(lines[1]), 1<<20)
	require.NoError(t, err)
	assert.Nil(t, last.Then)
	assert.True(t, last.Removed)

	// A plan that does not parse is said, and the copies go.
	copied = writePlan(t, dir, ".sba-root3.json", Plan{TimeoutMS: 1000})
	out.Reset()
	in = InRun{Exe: "/nonexistent", Plan: copied, RootPlan: copied, Remove: []string{copied}}
	require.NoError(t, in.Serve(context.Background(), bytes.NewReader([]byte("{not json\n")), &out))
	lines = bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	last, err = ParseMultiReport(bytes.NewReader(lines[1]), 1<<20)
	require.NoError(t, err)
	assert.Contains(t, last.RootError, "second plan")
	assert.True(t, last.Removed)
}
