package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// DefaultGateMaxAge bounds how long one gate vouches for run starts.
const DefaultGateMaxAge = 60 * time.Second

// gateRetries is how often a gate that erred (an engine call cut short, a
// probe timing out on a loaded host) is run again before it blocks.
const gateRetries = 2

// gates is the benchmark's gate, shared by the runs that start while it is
// valid: the deployment audit (host checks and the fresh run), one at a
// time, valid until the engine reports a change to the project's networks
// that is not one of this benchmark's runs or an audit's probe, or until
// maxAge passes. A run start then costs one shared audit, whatever the
// number of runs in flight, each of which is audited by its own.
type gates struct {
	backend checks.Backend
	cfg     checks.Config
	maxAge  time.Duration
	retry   time.Duration // pause before a retry

	mu      sync.Mutex
	current *report.Report
	at      time.Time
	gen     int           // changes seen; a gate is valid for the one it began in
	ofGen   int           // the gen the current gate began in
	running chan struct{} // closed when the gate under way is done
	ours    map[string]bool
	blind   error // the change stream broke: every start gets its own gate
}

func newGates(backend checks.Backend, cfg checks.Config, maxAge time.Duration) *gates {
	cfg.DeploymentOnly = true
	if maxAge <= 0 {
		maxAge = DefaultGateMaxAge
	}
	return &gates{backend: backend, cfg: cfg, maxAge: maxAge, retry: time.Second, ours: map[string]bool{}}
}

// watch follows the project's changes until ctx ends.
func (g *gates) watch(ctx context.Context) {
	changes, err := g.backend.Changes(ctx, g.cfg.Projects[0])
	if err != nil {
		g.mu.Lock()
		g.blind = err
		g.mu.Unlock()
		return
	}
	go func() {
		for c := range changes {
			g.mu.Lock()
			switch {
			case c.Err != nil:
				g.blind = c.Err
				g.gen++
			case c.Probe || (c.RunID != "" && g.ours[c.RunID]):
				// expected: an audit's probe, or a run this benchmark started
			default:
				g.gen++
			}
			g.mu.Unlock()
		}
	}()
}

// expect says a run ID is this benchmark's: its start is no change.
func (g *gates) expect(runID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ours[runID] = true
}

// get returns a gate valid now: the current one, the one under way, or a
// new one.
func (g *gates) get(ctx context.Context) (*report.Report, error) {
	for {
		g.mu.Lock()
		if g.current != nil && g.blind == nil && g.ofGen == g.gen && time.Since(g.at) < g.maxAge {
			rep := g.current
			g.mu.Unlock()
			return rep, nil
		}
		if g.running != nil {
			wait := g.running
			g.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		g.running, g.ofGen = done, g.gen
		g.mu.Unlock()

		rep, err := g.audit(ctx)

		g.mu.Lock()
		g.running = nil
		close(done)
		if err == nil {
			g.current, g.at = rep, time.Now()
		}
		blind := g.blind
		g.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if blind != nil && rep.Verdict == report.VerdictPass {
			rep.Notes = append(rep.Notes, "the engine's event stream ended ("+blind.Error()+"): every run start gets a gate of its own")
		}
		return rep, nil
	}
}

// audit runs the gate's audit, again when it erred; the gate that counts
// says how often it was tried.
func (g *gates) audit(ctx context.Context) (*report.Report, error) {
	var rep *report.Report
	var err error
	var erred []string
	for try := 0; try <= gateRetries; try++ {
		if try > 0 {
			select {
			case <-time.After(g.retry):
			case <-ctx.Done():
				return rep, nil
			}
		}
		rep, err = checks.Audit(ctx, g.backend, g.cfg)
		if err != nil || rep.Verdict != report.VerdictError || ctx.Err() != nil || try == gateRetries {
			break
		}
		erred = append(erred, fmt.Sprintf("gate %d of %d erred (%s): tried again", try+1, gateRetries+1, blockers(rep)))
	}
	if rep != nil {
		rep.Notes = append(erred, rep.Notes...)
	}
	return rep, err
}

// blockers says which checks of a gate keep a run from starting, and why.
func blockers(rep *report.Report) string {
	var out []string
	for _, p := range rep.Projects {
		for _, c := range p.Checks {
			if c.Status == report.Pass || c.Status == report.Skip || (c.Status == report.Warn && !rep.Strict) {
				continue
			}
			s := c.ID + " " + string(c.Status)
			if c.Target != "" {
				s += " (" + c.Target + ")"
			}
			if c.Message != "" {
				s += ": " + c.Message
			}
			out = append(out, s)
		}
	}
	if len(out) > 3 {
		out = append(out[:3], fmt.Sprintf("and %d more", len(out)-3))
	}
	return strings.Join(out, "; ")
}
