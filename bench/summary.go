package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// maxSummary bounds the summary.json read: ssebench writes a few KiB.
const maxSummary = 4 << 20

// summary is the part of ssebench's summary.json the audit compares.
type summary struct {
	RunID  string `json:"run_id"`
	Config struct {
		Egress string `json:"egress"`
	} `json:"config"`
}

// findRunDir finds results/<task>/<model>/<agent>/<run-id>: the directory
// named after the run ID (ssebench's model directory naming is its own).
func findRunDir(results, rid string) string {
	found := ""
	root := filepath.Clean(results)
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return fs.SkipDir
		}
		depth := strings.Count(strings.TrimPrefix(path, root), string(filepath.Separator))
		if d.IsDir() && d.Name() == rid && depth >= 1 {
			found = path
			return fs.SkipAll
		}
		if d.IsDir() && depth >= 6 {
			return fs.SkipDir
		}
		return nil
	})
	return found
}

func readSummary(dir string) (summary, error) {
	var s summary
	f, err := os.Open(filepath.Join(dir, "summary.json"))
	if err != nil {
		return s, err
	}
	defer f.Close()
	b, err := probes.ReadAtMost(f, maxSummary)
	if err != nil {
		return s, fmt.Errorf("summary.json: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("summary.json: %w", err)
	}
	return s, nil
}

// finish reads the results, judges the run and writes audit.json beside
// summary.json (or under results/ssebench-audit/<run-id>/ without one).
func (b *bencher) finish(rr *RunResult, waitErr error) {
	rr.RunDir = findRunDir(b.o.Results, rr.RunID)
	var sum summary
	sumErr := errors.New("no run directory for " + rr.RunID + " under " + b.o.Results)
	if rr.RunDir != "" {
		sum, sumErr = readSummary(rr.RunDir)
	}
	ck := checks.JudgeEgressRecorded(rr.RunID, rr.EgressSeen, sum.Config.Egress, sumErr)
	rr.EgressRecorded = &ck

	switch {
	case b.ctx.Err() != nil:
		rr.Verdict, rr.Reason = VerdictInterrupted, "interrupted: the run got one SIGINT"
	case rr.InFlight == nil && rr.Reason == "":
		rr.Verdict, rr.Reason = VerdictError, "the run's container never appeared: not audited in flight"
	case rr.InFlight == nil:
		rr.Verdict = VerdictError
	case rr.InFlight.Verdict == report.VerdictFail || ck.Status == report.Fail:
		rr.Verdict, rr.Reason = VerdictFail, failedIDs(rr)
	case rr.InFlight.Verdict != report.VerdictPass || ck.Status != report.Pass:
		rr.Verdict, rr.Reason = VerdictError, "in-flight audit "+string(rr.InFlight.Verdict)+", "+ck.ID+" "+string(ck.Status)
	case !examined(rr):
		rr.Verdict, rr.Reason = VerdictError, "the run ended before it could be audited from its own namespace or from inside"
	case waitErr != nil:
		rr.Verdict, rr.Reason = VerdictError, fmt.Sprintf("ssebench run exited %d", rr.ExitCode)
	default:
		rr.Verdict = VerdictPass
	}

	dir := rr.RunDir
	if dir == "" {
		dir = filepath.Join(b.o.Results, "ssebench-audit", rr.RunID)
	}
	if err := writeAuditJSON(dir, rr); err != nil && rr.Reason == "" {
		rr.Reason = err.Error()
	}
}

// examined says whether the in-flight audit made a check from the run's
// own namespace or from inside it: a run that ended first was not.
func examined(rr *RunResult) bool {
	run := checks.Container{RunID: rr.RunID}
	own, inside := checks.RunVantage(run).Name, checks.InContainerVantage(run)
	for _, p := range rr.InFlight.Projects {
		for _, c := range p.Checks {
			if c.Status != report.Skip && (c.Vantage == own || c.Vantage == inside) {
				return true
			}
		}
	}
	return false
}

func failedIDs(rr *RunResult) string {
	seen := map[string]bool{}
	var ids []string
	add := func(c report.Check) {
		if c.Status == report.Fail && !seen[c.ID] {
			seen[c.ID] = true
			ids = append(ids, c.ID)
		}
	}
	if rr.InFlight != nil {
		for _, p := range rr.InFlight.Projects {
			for _, c := range p.Checks {
				add(c)
			}
		}
	}
	if rr.EgressRecorded != nil {
		add(*rr.EgressRecorded)
	}
	return "failed: " + strings.Join(ids, ", ")
}

func writeAuditJSON(dir string, rr *RunResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rr, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, ".audit.json.partial")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "audit.json"))
}
