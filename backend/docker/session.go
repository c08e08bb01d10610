package docker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/images"
)

// removeTimeout bounds a removal, which runs on a context that Ctrl-C does
// not cancel.
const removeTimeout = 20 * time.Second

// session is one audit's hold on the engine: every object it makes is
// labelled with its audit ID.
type session struct {
	api     API
	opts    Options
	auditID string
	timeout time.Duration

	imageOnce sync.Once
	image     string
	imageID   string
	imageErr  error

	binOnce sync.Once
	bin     []byte
	binErr  error

	// waiting are the probes still waiting in runs for a second plan.
	mu      sync.Mutex
	waiting map[*followup]bool

	// probing counts the probe containers being made or still to remove:
	// Close waits for them, so that no create lands after its sweep.
	probing sync.WaitGroup
	closing bool // set by Close, under mu: no probe starts after it
}

var _ checks.Session = (*session)(nil)

// Close removes every probe container of this audit. It first waits for
// the probe containers under way: their creates are never cut short (the
// engine would still complete one after its client gave up, maybe after
// the sweep), and each removes its own container.
func (s *session) Close(ctx context.Context, _ bool) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	// A probe still waiting in a run (an audit cut short between its
	// rounds) is told there is no second plan, and removes its copies.
	s.mu.Lock()
	s.closing = true
	waiting := make([]*followup, 0, len(s.waiting))
	for f := range s.waiting {
		waiting = append(waiting, f)
	}
	s.mu.Unlock()
	var errs []error
	for _, f := range waiting {
		if res := f.Finish(sctx, nil); res.RemoveErr != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.run.RunName(), res.RemoveErr))
		}
	}
	settle := time.Duration(0) // every create returned
	if !waitAtMost(&s.probing, removeTimeout) {
		settle = settleAfterCrash // a create still under way: look again for a while
	}
	if _, err := sweep(sctx, s.api, settle, LabelProbe+"="+s.auditID); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ProbeImage names the probe image this session used.
func (s *session) ProbeImage() (string, string) { return s.image, s.imageID }

// probeImage is the probe image, built once per session unless given.
func (s *session) probeImage(ctx context.Context) (string, error) {
	s.imageOnce.Do(func() {
		s.image = s.opts.ProbeImage
		if s.image == "" {
			if s.image, _, s.imageErr = EnsureProbeImage(ctx, s.api, s.opts.Binary); s.imageErr != nil {
				return
			}
		}
		if ii, err := s.api.ImageInspect(ctx, s.image); err == nil {
			s.imageID = ii.ID
		}
	})
	return s.image, s.imageErr
}

// binary is the probe's executable, read once: what is copied into runs.
func (s *session) binary() ([]byte, error) {
	s.binOnce.Do(func() { s.bin, s.binErr = images.ReadProbeExecutable(s.opts.Binary) })
	return s.bin, s.binErr
}

// waitAtMost waits for wg for at most d and says whether it finished.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// startProbing counts a probe container about to be made, unless the
// session is closing.
func (s *session) startProbing() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return errors.New("interrupted: the audit is ending")
	}
	s.probing.Add(1)
	return nil
}
