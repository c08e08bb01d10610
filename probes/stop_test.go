package probes

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startCopy runs a copy of sleep under name in dir, as the audit runs its
// copied probe; the process is reaped at the end of the test.
func startCopy(t *testing.T, dir, name string) (*exec.Cmd, string) {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	data, err := os.ReadFile(sleep)
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, data, 0o755))
	cmd := exec.Command(path, "30")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Until the exec has happened, /proc/<pid>/exe is still the test binary.
	require.Eventually(t, func() bool {
		exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "exe"))
		return exe == path
	}, 5*time.Second, 10*time.Millisecond)
	return cmd, path
}

// alive: the process exists and is not a zombie (a killed child stays one
// until reaped).
func alive(cmd *exec.Cmd) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "stat"))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X'
}

func exited(cmd *exec.Cmd) bool {
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// onlyKill lets StopCopies signal the test's own children only, and records
// any other pid it tried: a matcher gone wrong must not reach the host's
// processes.
func onlyKill(t *testing.T, cmds ...*exec.Cmd) *[]int {
	t.Helper()
	var foreign []int
	saved := kill
	t.Cleanup(func() { kill = saved })
	kill = func(pid int) error {
		for _, c := range cmds {
			if c.Process.Pid == pid {
				return saved(pid)
			}
		}
		foreign = append(foreign, pid)
		return nil
	}
	return &foreign
}

func TestStopCopies(t *testing.T) {
	dir := t.TempDir()
	probe, probePath := startCopy(t, dir, ".sba-probe-1")
	deleted, deletedPath := startCopy(t, dir, ".sba-probe-2")
	require.NoError(t, os.Remove(deletedPath)) // exe now reads "… (deleted)"
	other, _ := startCopy(t, dir, ".sba-probe-3")
	foreign := onlyKill(t, probe, deleted, other)

	n, err := StopCopies("/proc", []string{probePath, deletedPath}, ".sba-")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.True(t, exited(probe), "the running copy is stopped")
	assert.True(t, exited(deleted), "a copy already unlinked is stopped too")
	assert.True(t, alive(other), "a process running another file is left alone")
	assert.Empty(t, *foreign, "no process but the copies was signalled")
}

func TestStopCopiesRefusesForeignPaths(t *testing.T) {
	dir := t.TempDir()
	running, path := startCopy(t, dir, "sleep")
	foreign := onlyKill(t, running)
	_, err := StopCopies("/proc", []string{path}, ".sba-")
	assert.ErrorContains(t, err, "refusing")
	_, err = StopCopies("/proc", []string{filepath.Join(dir, ".sba-x")}, "")
	assert.ErrorContains(t, err, "empty prefix")
	assert.True(t, alive(running), "nothing was killed")
	assert.Empty(t, *foreign)
}

// Where /proc/<pid>/exe cannot be read (a root without CAP_SYS_PTRACE
// looking at another uid's process, or at a non-dumpable one), the
// process's argv[0] identifies the copy. A /proc of the test's making
// stands for that view.
func TestStopCopiesByArgv0(t *testing.T) {
	dir := t.TempDir()
	probe, path := startCopy(t, dir, ".sba-probe-1")
	bystander, _ := startCopy(t, dir, ".sba-probe-2")
	foreign := onlyKill(t, probe, bystander)
	proc := t.TempDir()
	for _, p := range []struct {
		cmd     *exec.Cmd
		cmdline string
	}{
		{probe, path + "\x00probe\x00--plan\x00x"},
		{bystander, "/bin/sh\x00" + path}, // the path as a later argument is not a match
	} {
		d := filepath.Join(proc, strconv.Itoa(p.cmd.Process.Pid))
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "cmdline"), []byte(p.cmdline), 0o444))
	}
	n, err := StopCopies(proc, []string{path}, ".sba-")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.True(t, exited(probe))
	assert.True(t, alive(bystander))
	assert.Empty(t, *foreign)
}
