package probes

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// As uid 1000 on its own thread, the probe sees what the agent sees: a
// root-only directory and socket are closed to it, while the rest of the
// process stays root.
func TestRunOnThreadAs(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to change a thread's credentials")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	closed := filepath.Join(dir, "closed")
	require.NoError(t, os.Mkdir(closed, 0o700))
	secret := filepath.Join(closed, "secret")
	require.NoError(t, os.WriteFile(secret, nil, 0o600))
	sock := filepath.Join(dir, "admin.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, os.Chmod(sock, 0o600))

	plan := Plan{TimeoutMS: 1000, Tasks: []Task{
		{ID: "file", Kind: KindFile, Path: secret},
		{ID: "unix", Kind: KindUnix, Path: sock},
	}}
	rep, ok, err := runOnThreadAs(context.Background(), plan, 1000, 1000)
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, 1000, rep.UID)
	assert.Equal(t, 1000, rep.GID)
	require.Len(t, rep.Results, 2)
	assert.Equal(t, Denied, rep.Results[0].Outcome, rep.Results[0].Detail)
	assert.Equal(t, Denied, rep.Results[1].Outcome, rep.Results[1].Detail)

	// The process is still root, on every thread.
	assert.Equal(t, 0, os.Getuid())
	rep, _, err = runOnThreadAs(context.Background(), plan, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, Exists, rep.Results[0].Outcome)
	assert.Equal(t, Connected, rep.Results[1].Outcome)
	for range 50 { // goroutines land on any thread: none may be uid 1000
		_, err := os.Stat(secret)
		require.NoError(t, err)
	}

	// What needs a goroutine of its own goes to a child process.
	_, ok, _ = runOnThreadAs(context.Background(), Plan{Tasks: []Task{{ID: "t", Kind: KindTCP}}}, 1000, 1000)
	assert.False(t, ok)
}
