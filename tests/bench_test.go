package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/fixtures"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// BenchmarkAudit measures whole audits of the correct fixture as a user runs
// them (the real binary, probe image already built) with 0, 2, 20 and 100
// live runs: wall time per audit, the tool's peak resident memory and what
// the audit sent (its report's cost). At 2 runs it also times a
// checklist-style baseline that runs the same checks one `docker run`
// each, and at 20 and 100 runs it relates the time to 2 runs' time.
// `make bench` runs it; nothing here asserts a time.
func BenchmarkAudit(b *testing.B) {
	wall := map[int]float64{}
	for _, runs := range []int{0, 2, 20, 100} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			d, err := fixtures.Up(b.Context(), api, fixtures.Options{Project: "sbabench" + randHex(3),
				Label: "bench", Image: image, UpstreamDNS: world.Address, Runs: runs})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Down(b.Context())
			port := closedPort(b)
			args := append([]string{"audit", "--format", "json", "--project", d.Project}, worldArgs(port)...)
			// Warm-up: the first audit of a fresh binary builds the probe image.
			if code, _, _, out := auditOnce(args); code != 0 {
				b.Fatalf("warm-up audit exited %d: %s", code, failingRows(out))
			}
			var peak int64
			var cost report.Cost
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				code, _, rss, out := auditOnce(args)
				if code != 0 {
					b.Fatalf("audit exited %d: %s", code, failingRows(out))
				}
				peak = max(peak, rss)
				var rep report.Report
				if err := json.Unmarshal(out, &rep); err != nil || rep.Cost == nil {
					b.Fatalf("no cost in the report: %v", err)
				}
				cost = *rep.Cost
			}
			mean := time.Since(start).Seconds() / float64(b.N)
			b.StopTimer()
			wall[runs] = mean
			b.ReportMetric(mean, "s/audit")
			b.ReportMetric(float64(peak)/1024, "MB-peak-rss")
			b.ReportMetric(float64(cost.Probes), "probes")
			b.ReportMetric(float64(cost.RunExecs), "run-execs")
			b.ReportMetric(float64(cost.TasksSent), "tasks-sent")
			switch runs {
			case 2:
				base, n := checklistBaseline(b, d.Project, port)
				b.ReportMetric(base, "s/baseline")
				b.ReportMetric(float64(n), "baseline-docker-runs")
				b.ReportMetric(base/mean, "x-faster-than-baseline")
			case 20, 100:
				if wall[2] > 0 {
					b.ReportMetric(mean/wall[2], "x-wall-of-2-runs")
				}
			}
		})
	}
}

// checklistBaseline runs the audit's own plan the way a checklist script
// would: one `docker run --rm` per check, one after the other. It returns
// the wall time and the number of containers it ran.
func checklistBaseline(b *testing.B, project string, hostPort int) (float64, int) {
	b.Helper()
	ref, err := exec.Command(binary, "probe-image", "build").Output()
	if err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(binary, append([]string{"plan", "--project", project}, worldArgs(hostPort)...)...).Output()
	if err != nil {
		b.Fatal(err)
	}
	var plans []checks.VantagePlan
	if err := json.Unmarshal(out, &plans); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	label := "ssebench-audit.probe=baseline-" + randHex(4)
	n := 0
	start := time.Now()
	for _, vp := range plans {
		for _, c := range vp.Checks {
			plan := probes.Plan{TimeoutMS: 1000}
			for j, t := range c.Tasks {
				t.ID = fmt.Sprint(j)
				plan.Tasks = append(plan.Tasks, t)
			}
			file := filepath.Join(dir, fmt.Sprintf("plan-%d.json", n))
			data, _ := json.Marshal(plan)
			if err := os.WriteFile(file, data, 0o644); err != nil {
				b.Fatal(err)
			}
			args := []string{"run", "--rm", "--label", label, "--label", "ssebench-audit.project=" + project,
				"--network", vp.NetworkMode, "-v", file + ":/plan.json:ro"}
			if vp.DNS != "" {
				args = append(args, "--dns", vp.DNS)
			}
			args = append(args, strings.TrimSpace(string(ref)), "--plan", "/plan.json")
			if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
				b.Fatalf("docker run for %s: %v\n%s", c.ID, err, out)
			}
			n++
		}
	}
	return time.Since(start).Seconds(), n
}

// auditOnce runs the binary and returns its exit code, wall time, peak RSS
// in KiB, measured by the peakrss launcher (its comment says why), and
// its stdout.
func auditOnce(args []string) (int, time.Duration, int64, []byte) {
	cmd := exec.Command(peakRSS(), append([]string{binary}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return -1, took, 0, nil
	}
	var kb int64
	for _, l := range strings.Split(stderr.String(), "\n") {
		if v, ok := strings.CutPrefix(l, "peak-rss-kb "); ok {
			kb, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return code, took, kb, stdout.Bytes()
}

// failingRows lists what made an audit fail, from its JSON report.
func failingRows(out []byte) string {
	var rep report.Report
	if json.Unmarshal(out, &rep) != nil {
		return string(out)
	}
	return fmt.Sprint(failing(&rep))
}

var (
	peakRSSOnce sync.Once
	peakRSSPath string
)

// peakRSS builds the launcher once, beside the binary.
func peakRSS() string {
	peakRSSOnce.Do(func() {
		path := filepath.Join(filepath.Dir(binary), "peakrss")
		build := exec.Command("go", "build", "-o", path, "./peakrss")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			panic(fmt.Sprintf("building peakrss: %v\n%s", err, out))
		}
		peakRSSPath = path
	})
	return peakRSSPath
}
