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
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	runs  []*RunResult
	since map[*RunResult]time.Time
	drawn int
	done  chan struct{}
	wg    sync.WaitGroup
}

func newProgress(w io.Writer, live bool, runs []*RunResult) *progress {
	p := &progress{w: w, live: live && w != nil, runs: runs, since: map[*RunResult]time.Time{}, done: make(chan struct{})}
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

// set moves a run to a phase.
func (p *progress) set(rr *RunResult, phase string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.since[rr]; !ok {
		p.since[rr] = time.Now()
	}
	rr.Phase = phase
	switch {
	case p.w == nil:
	case p.live:
		p.redraw()
	default:
		fmt.Fprintln(p.w, p.line(rr))
	}
}

func (p *progress) line(rr *RunResult) string {
	elapsed := ""
	if t, ok := p.since[rr]; ok {
		elapsed = time.Since(t).Round(100 * time.Millisecond).String()
	}
	s := fmt.Sprintf("%-24s %-20s %8s", rr.Task, rr.Phase, elapsed)
	if rr.Verdict != "" {
		s += "  " + rr.Verdict
		if rr.Reason != "" {
			s += " (" + rr.Reason + ")"
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
