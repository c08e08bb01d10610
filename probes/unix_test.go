package probes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unixListener listens on dir/name and counts what each accepted
// connection sent; the count channel gets one value per connection.
func unixListener(t *testing.T, path string) (*net.UnixListener, <-chan int) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	sent := make(chan int, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				buf := make([]byte, 64)
				n := 0
				for {
					k, err := c.Read(buf)
					n += k
					if err != nil {
						break
					}
				}
				sent <- n
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln, sent
}

func TestProbeUnix(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.sock")
	_, sent := unixListener(t, live)

	// a socket file whose listener is gone: connect() is refused
	stale := filepath.Join(dir, "stale.sock")
	ln, _ := unixListener(t, stale)
	ln.SetUnlinkOnClose(false)
	require.NoError(t, ln.Close())
	_, err := os.Lstat(stale)
	require.NoError(t, err, "the socket file stays")

	// a live socket with mode 0000: only root may connect
	locked := filepath.Join(dir, "locked.sock")
	unixListener(t, locked)
	require.NoError(t, os.Chmod(locked, 0))

	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o600))

	tests := []struct {
		name     string
		path     string
		want     Outcome
		rootOnly bool // the outcome holds only for a non-root uid
	}{
		{"listening", live, Connected, false},
		{"socket file without a listener", stale, Refused, false},
		{"missing", filepath.Join(dir, "missing.sock"), NotFound, false},
		{"missing parent", filepath.Join(dir, "nodir", "x.sock"), NotFound, false},
		{"a regular file in the path", filepath.Join(plain, "x.sock"), NotFound, false},
		{"a regular file is not a socket", plain, Refused, false},
		{"mode 0000 as non-root", locked, Denied, true},
		{"no path", "", Error, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rootOnly && os.Geteuid() == 0 {
				t.Skip("root bypasses the socket's mode; TestClassifyUnixError covers EACCES")
			}
			r := probeUnix(testCtx(t, time.Second), Task{Kind: KindUnix, Path: tt.path})
			assert.Equal(t, tt.want, r.Outcome, "detail: %s", r.Detail)
			assert.Equal(t, tt.path, r.Peer)
			assert.Nil(t, r.HTTP)
			assert.Nil(t, r.File)
			if tt.want != Connected {
				assert.NotEmpty(t, r.Detail)
			}
		})
	}
	select {
	case n := <-sent:
		assert.Zero(t, n, "nothing is sent on the socket")
	case <-time.After(time.Second):
		t.Fatal("the listener saw no connection")
	}
}

// TestProbeUnixRoot: as root a 0000 socket still connects (root ignores
// the mode); the host must run this probe as the agent's uid.
func TestProbeUnixRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	path := filepath.Join(t.TempDir(), "locked.sock")
	unixListener(t, path)
	require.NoError(t, os.Chmod(path, 0))
	r := probeUnix(testCtx(t, time.Second), Task{Path: path})
	assert.Equal(t, Connected, r.Outcome, r.Detail)
}

func TestClassifyUnixError(t *testing.T) {
	unixErr := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "unix", Err: &os.SyscallError{Syscall: "connect", Err: errno}}
	}
	tests := []struct {
		name string
		err  error
		want Outcome
	}{
		{"nil", nil, Connected},
		{"no listener", unixErr(syscall.ECONNREFUSED), Refused},
		{"mode denies this uid", unixErr(syscall.EACCES), Denied},
		{"lsm denies", unixErr(syscall.EPERM), Denied},
		{"missing", unixErr(syscall.ENOENT), NotFound},
		{"a file in the path", unixErr(syscall.ENOTDIR), NotFound},
		{"wrapped again", fmt.Errorf("x: %w", unixErr(syscall.EACCES)), Denied},
		{"backlog full", unixErr(syscall.EAGAIN), Error},
		{"timeout", &net.OpError{Op: "dial", Net: "unix", Err: os.ErrDeadlineExceeded}, Error},
		{"path too long", unixErr(syscall.EINVAL), Error},
		{"other", errors.New("boom"), Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, classifyUnixError(tt.err))
		})
	}
}

func TestProbeUnixCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := filepath.Join(t.TempDir(), "s.sock")
	unixListener(t, path)
	r := probeUnix(ctx, Task{Path: path})
	assert.Equal(t, Error, r.Outcome, "a cancelled probe claims nothing")
}
