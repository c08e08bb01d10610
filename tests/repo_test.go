package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repository holds sources, not what builds make of them: a build
// output committed once (a 16 MB binary at the root) must not come back.
func TestNoBuildOutputsTracked(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git work tree: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		path := filepath.Join(root, f)
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		assert.Less(t, fi.Size(), int64(1<<20), "%s is tracked and larger than 1 MiB", f)
		head := make([]byte, 4)
		if fh, err := os.Open(path); err == nil {
			_, _ = fh.Read(head)
			fh.Close()
		}
		assert.False(t, bytes.Equal(head, []byte("\x7fELF")), "%s is a tracked executable", f)
	}
	// What builds write is ignored, wherever it lands.
	for _, f := range []string{"ssebench-audit", "bin/ssebench-audit", "extension/build/lib/x.py",
		"extension/src/ssebench_audit_ext.egg-info/PKG-INFO", "tests/tests.test"} {
		assert.NoError(t, exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", f).Run(), "%s is not ignored", f)
	}
}
