package tests

import (
	"fmt"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/ssebench-audit/ssebench-audit/fixtures"
)

// BenchmarkAudit measures a whole audit of the correct fixture, as a user
// runs it (the real binary, probe image already built), with 0, 2 and 20
// live runs: wall time per audit and the tool's peak resident memory.
// `make bench` runs it; nothing here asserts a time.
func BenchmarkAudit(b *testing.B) {
	for _, runs := range []int{0, 2, 20} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			d, err := fixtures.Up(b.Context(), api, fixtures.Options{Project: "sbabench" + randHex(3),
				Label: "bench", Image: image, UpstreamDNS: world.Address, Runs: runs})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Down(b.Context())
			port := closedPortB(b)
			args := append([]string{"audit", "--format", "json", "--project", d.Project}, worldArgs(port)...)
			// Warm-up: the first audit of a fresh binary builds the probe image.
			if code, _, _ := auditOnce(args); code != 0 {
				b.Fatalf("warm-up audit exited %d", code)
			}
			var peak int64
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				code, _, rss := auditOnce(args)
				if code != 0 {
					b.Fatalf("audit exited %d", code)
				}
				peak = max(peak, rss)
			}
			b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/audit")
			b.ReportMetric(float64(peak)/1024, "MB-peak-rss")
		})
	}
}

// auditOnce runs the binary and returns its exit code, wall time and peak
// RSS in KiB.
func auditOnce(args []string) (int, time.Duration, int64) {
	cmd := exec.Command(binary, args...)
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return -1, took, 0
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		return code, took, 0
	}
	return code, took, ru.Maxrss
}

func closedPortB(b *testing.B) int {
	b.Helper()
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
