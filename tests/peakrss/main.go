// Command peakrss runs a command and reports its peak resident memory on
// stderr ("peak-rss-kb N"), exiting as it did. The benchmark measures the
// tool through it: a child's ru_maxrss also counts the memory of the
// process that forked it (the forked copy, before exec), so measured from
// the large test binary the figure was the test binary's, not the tool's.
// This launcher is small, so the figure is the tool's own.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peakrss COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(2)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		fmt.Fprintf(os.Stderr, "peak-rss-kb %d\n", ru.Maxrss)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
