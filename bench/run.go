package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// Phases of a run, as the progress display shows them.
const (
	PhaseQueued   = "queued"
	PhaseGate     = "gate"
	PhaseStarting = "starting"
	PhaseRunning  = "running"
	PhaseAuditing = "auditing in flight"
	PhaseFinish   = "finishing"
	PhaseDone     = "done"
)

// Verdicts of a run.
const (
	VerdictPass        = "pass"
	VerdictBlocked     = "blocked"     // its gate failed: not started
	VerdictFail        = "fail"        // started, and an audit of it failed
	VerdictError       = "error"       // something could not be done or checked
	VerdictNotStarted  = "not started" // fail-fast or Ctrl-C came first
	VerdictInterrupted = "interrupted"
)

// RunResult is one task's run, its audits and its verdict; audit.json.
type RunResult struct {
	Task       string         `json:"task"`
	RunID      string         `json:"run_id"`
	Agent      string         `json:"agent"`
	Model      string         `json:"model"`
	Egress     string         `json:"egress_requested"`
	Phase      string         `json:"-"`
	Verdict    string         `json:"verdict"`
	Reason     string         `json:"reason,omitempty"`
	ExitCode   int            `json:"ssebench_exit_code"`
	Container  string         `json:"container,omitempty"`
	EgressSeen string         `json:"egress_seen,omitempty"`
	Gate       *report.Report `json:"gate"`
	// GateID names the gate the run relied on (its audit ID): one gate
	// may vouch for several run starts.
	GateID         string         `json:"gate_audit_id,omitempty"`
	InFlight       *report.Report `json:"in_flight"`
	EgressRecorded *report.Check  `json:"egress_recorded,omitempty"`
	RunDir         string         `json:"run_dir,omitempty"`
	OutputTail     string         `json:"ssebench_output_tail,omitempty"`
	StartedAt      time.Time      `json:"started_at"`
	DurationMS     int64          `json:"duration_ms"`
}

type bencher struct {
	backend      checks.Backend
	o            Options
	ctx          context.Context // Ctrl-C
	stopStarting context.Context // Ctrl-C or fail-fast
	onBlocked    func()
	progress     *progress
	gates        *gates
}

func (b *bencher) set(rr *RunResult, phase string) { b.progress.set(rr, phase) }

func (b *bencher) notStarted(rr *RunResult) {
	rr.Verdict, rr.Reason = VerdictNotStarted, "stopped before its gate (fail-fast or interrupt)"
	b.set(rr, PhaseDone)
}

// one takes a task through gate, run, in-flight audit and results.
func (b *bencher) one(rr *RunResult) {
	rr.Agent, rr.Model, rr.Egress, rr.StartedAt = b.o.Agent, b.o.Model, b.o.Egress, time.Now().UTC()
	defer func() { rr.DurationMS = time.Since(rr.StartedAt).Milliseconds(); b.set(rr, PhaseDone) }()
	if b.stopStarting.Err() != nil {
		b.notStarted(rr)
		return
	}

	b.set(rr, PhaseGate)
	gate, err := b.gates.get(b.stopStarting)
	switch {
	case b.stopStarting.Err() != nil:
		rr.Verdict, rr.Reason = VerdictNotStarted, "interrupted during its gate"
		return
	case err != nil:
		rr.Verdict, rr.Reason = VerdictError, "gate: "+err.Error()
		return
	}
	rr.Gate, rr.GateID = gate, gate.AuditID
	if gate.ExitCode() != report.ExitPass {
		rr.Verdict, rr.Reason = VerdictBlocked, "gate "+gate.AuditID+" verdict "+string(gate.Verdict)+": run not started: "+blockers(gate)
		// The evidence of why is kept where the run's would have been.
		if err := writeAuditJSON(filepath.Join(b.o.Results, "ssebench-audit", rr.RunID), rr); err != nil {
			rr.Reason += " (" + err.Error() + ")"
		}
		b.onBlocked()
		return
	}
	b.gates.expect(rr.RunID)

	b.set(rr, PhaseStarting)
	cmd := b.command(rr)
	tail := &tailBuffer{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = tail, tail
	if err := cmd.Start(); err != nil {
		rr.Verdict, rr.Reason = VerdictError, "starting ssebench: "+err.Error()
		return
	}
	// Ctrl-C reaches the child as ssebench expects it: one SIGINT. The
	// child has its own process group, so the terminal's does not double it.
	exited := make(chan struct{})
	go func() {
		select {
		case <-b.ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGINT)
		case <-exited:
		}
	}()
	b.set(rr, PhaseRunning)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.inFlight(rr, exited)
	}()
	err = cmd.Wait()
	close(exited)
	wg.Wait()
	rr.ExitCode = cmd.ProcessState.ExitCode()
	rr.OutputTail = tail.String()

	b.set(rr, PhaseFinish)
	b.finish(rr, err)
}

// command is `CMD run --task … --run-id RID --egress POLICY [extra]` in
// the audited project.
func (b *bencher) command(rr *RunResult) *exec.Cmd {
	args := append(append([]string{}, b.o.SSEBench[1:]...), "run", "--task", rr.Task, "--agent", b.o.Agent,
		"--model", b.o.Model, "--run-id", rr.RunID, "--egress", b.o.Egress)
	cmd := exec.Command(b.o.SSEBench[0], append(args, b.o.Extra...)...)
	cmd.Env = append(append([]string{}, b.o.Env...), "COMPOSE_PROJECT_NAME="+b.o.Audit.Projects[0])
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// inFlight waits for the run's container and audits it from its own
// namespace and from inside, while the run is live.
func (b *bencher) inFlight(rr *RunResult, exited <-chan struct{}) {
	var found *checks.Container
	tick := time.NewTicker(b.o.Poll)
	defer tick.Stop()
	for found == nil {
		if c := b.findRun(rr.RunID); c != nil {
			found = c
			break
		}
		select {
		case <-exited:
			return
		case <-b.ctx.Done():
			return
		case <-tick.C:
		}
	}
	rr.Container = found.Name
	rr.EgressSeen = checks.EgressOf(*found, b.o.Audit.Projects[0])
	b.set(rr, PhaseAuditing)
	cfg := b.o.Audit
	cfg.RunID = rr.RunID
	rep, err := checks.Audit(b.ctx, b.backend, cfg)
	if err != nil {
		rr.Reason = "in-flight audit: " + err.Error()
		return
	}
	rr.InFlight = rep
	select {
	case <-exited:
	default:
		b.set(rr, PhaseRunning)
	}
}

func (b *bencher) findRun(rid string) *checks.Container {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	c, err := b.backend.FindRun(ctx, b.o.Audit.Projects[0], rid)
	if err != nil {
		return nil
	}
	return c
}

// tailBuffer keeps the last max bytes a child wrote.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
