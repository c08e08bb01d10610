package probes

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
)

// onThread are the kinds runOnThreadAs runs: their permission checks are
// made by the syscall of the calling thread (lstat, access, connect to a
// Unix socket), with no goroutine of their own.
var onThread = map[Kind]bool{KindFile: true, KindUnix: true}

// runOnThreadAs runs plan, one task after another, on one OS thread whose
// own credentials are set to uid:gid with no supplementary groups: the
// agent's view of the files and sockets, without starting a process for
// it (each start of this binary in a run cost as much CPU as the work).
// The thread stays locked to its goroutine and ends with it, so no other
// goroutine runs with these credentials; while a thread is locked, Go
// makes any new thread from a clean template thread, not from it. ok is
// false when the plan holds a kind that must run in a process of its own.
func runOnThreadAs(ctx context.Context, p Plan, uid, gid int) (rep Report, ok bool, err error) {
	for _, t := range p.Tasks {
		if !onThread[t.Kind] {
			return Report{}, false, nil
		}
	}
	type result struct {
		rep Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		if err := setThreadCredentials(uid, gid); err != nil {
			done <- result{err: err}
			return
		}
		r := Report{Version: Version, UID: syscall.Getuid(), GID: syscall.Getgid(), Results: make([]Result, 0, len(p.Tasks))}
		for _, t := range p.Tasks {
			r.Results = append(r.Results, runTask(ctx, t, taskTimeout(t, p)))
		}
		done <- result{rep: r}
	}()
	res := <-done
	return res.rep, true, res.err
}

// setThreadCredentials changes the calling thread's groups, gid and uid,
// and only this thread's: the raw system calls, not Go's syscall.Setuid,
// which changes every thread of the process.
func setThreadCredentials(uid, gid int) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, 0, 0, 0); e != 0 {
		return fmt.Errorf("setgroups: %w", e)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return fmt.Errorf("setresgid %d: %w", gid, e)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return fmt.Errorf("setresuid %d: %w", uid, e)
	}
	return nil
}
