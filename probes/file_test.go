package probes

import (
	"context"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProbeFile(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o700)) // whatever the umask
	uid, gid := os.Getuid(), os.Getgid()
	isRoot := os.Geteuid() == 0

	// the documented layout: a 0600 socket in a 0700 directory
	private := filepath.Join(root, "private")
	require.NoError(t, os.Mkdir(private, 0o700))
	secret := filepath.Join(private, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("x"), 0o600))
	require.NoError(t, os.Chmod(secret, 0o600)) // whatever the umask
	sock := filepath.Join(private, "admin.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	require.NoError(t, os.Chmod(sock, 0o600))

	// a world-writable sticky directory, like /tmp
	sticky := filepath.Join(root, "sticky")
	require.NoError(t, os.Mkdir(sticky, 0o700))
	require.NoError(t, os.Chmod(sticky, fs.ModeSticky|0o777)) // os.Chmod ignores a raw 0o1000

	// a directory this uid may not write (root may write it anyway)
	readonly := filepath.Join(root, "readonly")
	require.NoError(t, os.Mkdir(readonly, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(readonly, "f"), nil, 0o644))
	require.NoError(t, os.Chmod(readonly, 0o555))
	t.Cleanup(func() { os.Chmod(readonly, 0o700) })

	// setuid and setgid bits
	suid := filepath.Join(root, "suid")
	require.NoError(t, os.WriteFile(suid, nil, 0o755))
	require.NoError(t, os.Chmod(suid, 0o755|fs.ModeSetuid|fs.ModeSetgid))

	link := filepath.Join(root, "link")
	require.NoError(t, os.Symlink(sock, link))

	dirOf := func(perm uint32, mode string, writable bool) *FileResult {
		return &FileResult{Mode: mode, Perm: perm, UID: uid, GID: gid, DirWritable: writable}
	}
	rootDir := func() *FileResult { return dirOf(0o700, "drwx------", true) }
	privateDir := dirOf(0o700, "drwx------", true) // its parent, the temp dir, is ours

	tests := []struct {
		name string
		path string
		want Outcome
		file *FileResult
	}{
		{"0600 file in a 0700 dir", secret, Exists,
			&FileResult{Mode: "-rw-------", Perm: 0o600, UID: uid, GID: gid, DirWritable: true, Dir: privateDir}},
		{"0600 socket", sock, Exists,
			&FileResult{Mode: "Srw-------", Perm: 0o600, Socket: true, UID: uid, GID: gid, DirWritable: true, Dir: privateDir}},
		{"trailing slash is cleaned", private + "/", Exists,
			&FileResult{Mode: "drwx------", Perm: 0o700, UID: uid, GID: gid, DirWritable: true, Dir: rootDir()}},
		{"sticky 01777 dir", sticky, Exists,
			&FileResult{Mode: "dtrwxrwxrwx", Perm: 0o1777, UID: uid, GID: gid, DirWritable: true, Dir: rootDir()}},
		{"a socket expected in a sticky dir, missing", filepath.Join(sticky, "admin.sock"), NotFound,
			&FileResult{UID: -1, GID: -1, DirWritable: true, Dir: &FileResult{
				Mode: "dtrwxrwxrwx", Perm: 0o1777, UID: uid, GID: gid, DirWritable: true}}},
		{"setuid and setgid", suid, Exists,
			&FileResult{Mode: "ugrwxr-xr-x", Perm: 0o6755, UID: uid, GID: gid, DirWritable: true, Dir: rootDir()}},
		{"symlink is not followed", link, Exists,
			&FileResult{Mode: "Lrwxrwxrwx", Perm: 0o777, UID: uid, GID: gid, DirWritable: true, Dir: rootDir()}},
		{"read-only dir", filepath.Join(readonly, "f"), Exists,
			&FileResult{Mode: "-rw-r--r--", Perm: 0o644, UID: uid, GID: gid, DirWritable: isRoot,
				Dir: dirOf(0o555, "dr-xr-xr-x", true)}},
		{"missing parent", filepath.Join(root, "nodir", "x"), NotFound,
			&FileResult{UID: -1, GID: -1, DirWritable: false, Dir: nil}},
		{"a file as parent", filepath.Join(secret, "x"), NotFound, nil},
		{"no path", "", Error, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := probeFile(context.Background(), Task{Kind: KindFile, Path: tt.path})
			assert.Equal(t, tt.want, r.Outcome, "detail: %s", r.Detail)
			assert.Equal(t, tt.path, r.Peer)
			if tt.name == "missing parent" {
				assert.Nil(t, r.File, "nothing known of the path or its parent")
				return
			}
			if tt.name == "a file as parent" {
				// lstat of the parent works: it is a regular file
				require.NotNil(t, r.File)
				assert.Equal(t, "-rw-------", r.File.Dir.Mode)
				assert.Equal(t, -1, r.File.UID)
				return
			}
			assert.Equal(t, tt.file, r.File)
			if tt.want != Exists {
				assert.NotEmpty(t, r.Detail)
			}
		})
	}
}

// TestProbeFileDenied: lstat under a 0700 directory of another uid is
// Denied, and the directory is still described.
func TestProbeFileDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may search any directory")
	}
	dir := filepath.Join(t.TempDir(), "closed")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "admin.sock"), nil, 0o600))
	require.NoError(t, os.Chmod(dir, 0))
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	r := probeFile(context.Background(), Task{Path: filepath.Join(dir, "admin.sock")})
	assert.Equal(t, Denied, r.Outcome, r.Detail)
	require.NotNil(t, r.File)
	require.NotNil(t, r.File.Dir)
	assert.Equal(t, "d---------", r.File.Dir.Mode)
	assert.False(t, r.File.DirWritable)
	assert.Equal(t, -1, r.File.UID)
}

func TestPermBits(t *testing.T) {
	tests := []struct {
		mode fs.FileMode
		want uint32
	}{
		{0o600, 0o600},
		{fs.ModeDir | 0o700, 0o700},
		{fs.ModeDir | fs.ModeSticky | 0o777, 0o1777},
		{fs.ModeSetuid | 0o755, 0o4755},
		{fs.ModeSetgid | 0o2750&0o777, 0o2750},
		{fs.ModeSocket | 0o666, 0o666},
		{fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky | 0o777, 0o7777},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, permBits(tt.mode), tt.mode.String())
	}
}
