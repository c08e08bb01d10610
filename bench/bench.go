// Package bench runs a benchmark through `ssebench run`, starting each run
// only after a passing audit of the deployment, auditing every run while it
// is live, and keeping that evidence beside the run's results.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// Options of one benchmark.
type Options struct {
	Tasks    []string
	Agent    string
	Model    string
	Egress   string   // restricted | open
	SSEBench []string // the command, e.g. ["uv", "run", "ssebench"]
	Results  string   // where ssebench writes results/
	Jobs     int
	FailFast bool
	Extra    []string      // passed to every `ssebench run` after its own flags
	Audit    checks.Config // the gate's audit; Projects[0] is the project
	Env      []string      // the children's environment (COMPOSE_PROJECT_NAME is set on top)
	Poll     time.Duration // how often to look for a run's container
	Progress io.Writer     // phase changes (a live display when Live)
	Live     bool          // Progress is a terminal
	// GateMaxAge bounds how long one gate vouches for run starts.
	GateMaxAge time.Duration
}

// runID is what `ssebench run --run-id` accepts.
var runID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Validate reports the first bad option as a one-line error.
func (o Options) Validate() error {
	switch {
	case len(o.Tasks) == 0:
		return errors.New("no task: give --task ID (repeatable) or --tasks FILE")
	case o.Agent == "" || o.Model == "":
		return errors.New("--agent and --model are required")
	case o.Egress != "restricted" && o.Egress != "open":
		return fmt.Errorf("--egress must be restricted or open, not %q", o.Egress)
	case len(o.SSEBench) == 0:
		return errors.New("--ssebench is empty")
	case o.Jobs < 1:
		return errors.New("--jobs must be at least 1")
	case o.GateMaxAge < 0:
		return errors.New("--gate-max-age must not be negative")
	case len(o.Audit.Projects) != 1 || o.Audit.AllProjects:
		return errors.New("bench runs one project: give a single --project (or COMPOSE_PROJECT_NAME)")
	}
	for _, t := range o.Tasks {
		if !runID.MatchString(t) {
			return fmt.Errorf("invalid task ID %q", t)
		}
	}
	return nil
}

// ReadTasks reads a tasks file: one ID a line, '#' comments, blanks ignored.
func ReadTasks(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) > 1<<20 {
		return nil, fmt.Errorf("%s: larger than 1 MiB", path)
	}
	var tasks []string
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			tasks = append(tasks, line)
		}
	}
	return tasks, nil
}

// Result of a whole benchmark.
type Result struct {
	Project  string       `json:"project"`
	Runs     []*RunResult `json:"runs"`
	Verdict  string       `json:"verdict"` // pass | fail | error
	ExitCode int          `json:"exit_code"`
}

// Run runs every task, at most Jobs at once, each behind its own gate.
func Run(ctx context.Context, backend checks.Backend, o Options) *Result {
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	res := &Result{Project: o.Audit.Projects[0]}
	for _, t := range o.Tasks {
		res.Runs = append(res.Runs, &RunResult{Task: t, RunID: newRunID(t), Phase: PhaseQueued, ExitCode: -1})
	}
	prog := newProgress(o.Progress, o.Live, res.Runs)
	defer prog.stop()

	// fail-fast stops starting runs; it never stops a run that started.
	stopCtx, stopStarting := context.WithCancel(ctx)
	defer stopStarting()
	b := &bencher{backend: backend, o: o, ctx: ctx, stopStarting: stopCtx, onBlocked: func() {
		if o.FailFast {
			stopStarting()
		}
	}, progress: prog, gates: newGates(backend, o.Audit, o.GateMaxAge)}
	b.gates.watch(stopCtx)

	// Runs start in task order, at most Jobs at once.
	sem := make(chan struct{}, o.Jobs)
	var wg sync.WaitGroup
	for _, rr := range res.Runs {
		select {
		case sem <- struct{}{}:
		case <-stopCtx.Done():
			b.notStarted(rr)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			b.one(rr)
		}()
	}
	wg.Wait()
	res.Verdict, res.ExitCode = verdict(res.Runs)
	return res
}

// verdict: 1 when a run was blocked or an audit failed, else 2 when
// anything could not be done, else 0.
func verdict(runs []*RunResult) (string, int) {
	worst := 0
	for _, r := range runs {
		switch r.Verdict {
		case VerdictPass:
		case VerdictBlocked, VerdictFail:
			return "fail", report.ExitFail
		default:
			worst = report.ExitError
		}
	}
	if worst != 0 {
		return "error", worst
	}
	return "pass", report.ExitPass
}

// newRunID makes a run ID that ssebench accepts and that names its task.
func newRunID(task string) string {
	id := checks.NewAuditID()[:8]
	t := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, task)
	if len(t) > 40 {
		t = t[:40]
	}
	return "sba-" + t + "-" + id
}
