package probes

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"syscall"
)

// kill is how StopCopies signals; tests narrow it to their own children, so
// a broken matcher fails a test instead of killing the test's host.
var kill = func(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// StopCopies kills every process of this PID namespace, but the caller,
// that runs one of paths (what the audit copied into a run): an exec
// outlives the audit that was interrupted while it ran, and nothing of an
// audit may keep running in a run after it. A process is matched by the
// file it executes (/proc/<pid>/exe, deleted or not) or, where that link
// cannot be read, by its argv[0]: a root without CAP_SYS_PTRACE, as in a
// container, cannot read the link of the agent-uid children, nor of the
// probe that started them (their setuid, in a vfork child sharing its
// memory, made it non-dumpable). Paths are checked as RemoveFiles checks
// them: one refused, none killed. It returns how many it signalled.
func StopCopies(procRoot string, paths []string, prefix string) (int, error) {
	if err := checkCopied(paths, prefix); err != nil {
		return 0, err
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
		want[p+" (deleted)"] = true
	}
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return 0, err
	}
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		dir := procRoot + "/" + e.Name()
		if exe, err := os.Readlink(dir + "/exe"); err == nil {
			if !want[exe] {
				continue
			}
		} else if !want[argv0(dir)] {
			continue
		}
		if kill(pid) == nil {
			n++
		}
	}
	return n, nil
}

// argv0 is the first argument a process was started with, "" if unknown.
func argv0(dir string) string {
	f, err := os.Open(dir + "/cmdline")
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := io.ReadFull(f, buf)
	arg, _, _ := bytes.Cut(buf[:n], []byte{0})
	return string(arg)
}
