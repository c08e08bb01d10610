package probes

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// wOK is access(2)'s W_OK, which package syscall does not export.
const wOK = 0x2

// probeFile lstats t.Path and its parent directory (symbolic links are
// reported, never followed) and asks access(2) whether this uid may write
// to the parent. The outcome is about t.Path: Exists, NotFound, Denied
// (the parent cannot be searched) or Error; the parent is described in
// File.Dir whenever it could be lstat'ed, also when t.Path is missing:
// a parent the agent can write where a root socket should be is itself a
// finding.
func probeFile(_ context.Context, t Task) Result {
	r := Result{Peer: t.Path}
	if t.Path == "" {
		r.Outcome, r.Detail = Error, "file task without a path"
		return r
	}
	path := filepath.Clean(t.Path)
	fr, err := lstatFile(path)
	switch {
	case err == nil:
		r.Outcome = Exists
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		r.Outcome, r.Detail = NotFound, clip("lstat: "+err.Error())
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		r.Outcome, r.Detail = Denied, clip("lstat: "+err.Error())
	default:
		r.Outcome, r.Detail = Error, clip("lstat: "+err.Error())
	}
	if fr == nil {
		fr = &FileResult{UID: -1, GID: -1}
	}
	if parent := filepath.Dir(path); parent != path {
		if dir, err := lstatFile(parent); err == nil {
			dir.DirWritable = writable(filepath.Dir(parent))
			fr.Dir = dir
		} else if r.Outcome == Exists {
			r.Detail = clip("parent: lstat: " + err.Error())
		}
		fr.DirWritable = writable(parent)
	}
	if r.Outcome != Exists && fr.Dir == nil && !fr.DirWritable {
		return r // nothing known at all
	}
	r.File = fr
	return r
}

// lstatFile describes path without following a final symbolic link.
func lstatFile(path string) (*FileResult, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	fr := &FileResult{
		Mode:   fi.Mode().String(),
		Perm:   permBits(fi.Mode()),
		Socket: fi.Mode()&fs.ModeSocket != 0,
		UID:    -1,
		GID:    -1,
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		fr.UID, fr.GID = int(st.Uid), int(st.Gid)
	}
	return fr, nil
}

// permBits is m's permission bits with setuid, setgid and sticky as the
// classic octal bits 04000, 02000 and 01000.
func permBits(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 04000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 02000
	}
	if m&fs.ModeSticky != 0 {
		p |= 01000
	}
	return p
}

// writable reports whether access(dir, W_OK) succeeds for this process's
// (real) uid and gids.
func writable(dir string) bool {
	return syscall.Access(dir, wOK) == nil
}
