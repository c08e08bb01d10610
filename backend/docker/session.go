package docker

import (
	"context"
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
}

var _ checks.Session = (*session)(nil)

// Close removes every probe container of this audit. After an interrupt
// it keeps looking for a while: a create the engine received still
// completes after its client gave up.
func (s *session) Close(ctx context.Context, interrupted bool) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	settle := time.Duration(0) // every create of a finished audit returned
	if interrupted {
		settle = settleAfterInterrupt
	}
	_, err := sweep(sctx, s.api, settle, LabelProbe+"="+s.auditID)
	return err
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
