package docker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ssebench-audit/ssebench-audit/checks"
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
}

var _ checks.Session = (*session)(nil)

// Close removes every probe container of this audit. After an interrupt
// it keeps looking for a while: a create the engine received still
// completes after its client gave up.
func (s *session) Close(ctx context.Context, interrupted bool) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	// A probe still waiting in a run (an audit cut short between its
	// rounds) is told there is no second plan, and removes its copies.
	s.mu.Lock()
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
	settle := time.Duration(0) // every create of a finished audit returned
	if interrupted {
		settle = settleAfterInterrupt
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

// binary is the tool's own executable, read once: what is copied into runs.
func (s *session) binary() ([]byte, error) {
	s.binOnce.Do(func() { s.bin, s.binErr = readExecutable(s.opts.Binary) })
	return s.bin, s.binErr
}
