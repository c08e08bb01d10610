package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress shows one line per run (task, phase, elapsed, verdict): redrawn
// in place on a terminal, as plain lines on each phase change otherwise.
// It draws from its own copy of each run's state, taken when the run's
// goroutine says so: the redraw ticker never reads a run being written.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	runs  []*RunResult
	shown map[*RunResult]*runState
	drawn int
	done  chan struct{}
	wg    sync.WaitGroup
}

// runState is what the display knows of a run.
type runState struct {
	task, phase, verdict, reason string
	since                        time.Time
}

func newProgress(w io.Writer, live bool, runs []*RunResult) *progress {
	p := &progress{w: w, live: live && w != nil, runs: runs, shown: map[*RunResult]*runState{}, done: make(chan struct{})}
	for _, rr := range runs {
		p.shown[rr] = &runState{task: rr.Task}
	}
	if p.live {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			t := time.NewTicker(250 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-p.done:
					return
				case <-t.C:
					p.mu.Lock()
					p.redraw()
					p.mu.Unlock()
				}
			}
		}()
	}
	return p
}

// set moves a run to a phase; only the goroutine that writes rr calls it.
func (p *progress) set(rr *RunResult, phase string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.shown[rr]
	if st.since.IsZero() {
		st.since = time.Now()
	}
	rr.Phase = phase
	st.phase, st.verdict, st.reason = phase, rr.Verdict, rr.Reason
	switch {
	case p.w == nil:
	case p.live:
		p.redraw()
	default:
		fmt.Fprintln(p.w, p.line(rr))
	}
}

func (p *progress) line(rr *RunResult) string {
	st := p.shown[rr]
	elapsed := ""
	if !st.since.IsZero() {
		elapsed = time.Since(st.since).Round(100 * time.Millisecond).String()
	}
	s := fmt.Sprintf("%-24s %-20s %8s", st.task, st.phase, elapsed)
	if st.verdict != "" {
		s += "  " + st.verdict
		if st.reason != "" {
			s += " (" + st.reason + ")"
		}
	}
	return s
}

// redraw rewrites the block of run lines in place (ANSI cursor movement).
func (p *progress) redraw() {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	}
	for _, rr := range p.runs {
		b.WriteString("\x1b[2K" + p.line(rr) + "\n")
	}
	p.drawn = len(p.runs)
	_, _ = io.WriteString(p.w, b.String())
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
	if p.live {
		p.mu.Lock()
		p.redraw()
		p.mu.Unlock()
	}
}
