package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// followup is a probe waiting in a run for its second plan.
type followup struct {
	s      *session
	x      *liveExec
	run    checks.Container
	self   string
	copied []string
	once   sync.Once
}

// Finish sends plan (nil: none) and reads the probe's last line: the
// plan's report and its removal of the copies; a second exec removes what
// the probe could not.
func (f *followup) Finish(ctx context.Context, plan *probes.Plan) (res checks.FollowupResult) {
	done := false
	f.once.Do(func() { done = true })
	if !done {
		return checks.FollowupResult{Err: errors.New("finished already")}
	}
	defer func() {
		f.s.mu.Lock()
		delete(f.s.waiting, f)
		f.s.mu.Unlock()
	}()
	defer f.x.close()
	removed := false
	defer func() {
		if !removed {
			res.Left, res.RemoveErr = f.s.removeLeft(ctx, f.run.ID, f.self, f.copied)
		}
	}()
	// One line: the plan, or an empty line for none (and the end of
	// stdin, where the connection can say so).
	var data []byte
	if plan != nil {
		var err error
		if data, err = json.Marshal(plan); err != nil {
			res.Err = fmt.Errorf("sending the second plan: %w", err)
			return res
		}
	}
	if _, err := f.x.att.Conn.Write(append(data, '\n')); err != nil {
		res.Err = fmt.Errorf("sending the second plan: %w", err)
		return res
	}
	_ = f.x.att.CloseWrite()
	line, err := f.x.line(ctx)
	if err != nil {
		res.Err = fmt.Errorf("the probe's second report: %w (stderr: %s)", err, f.x.stderrLine())
		return res
	}
	m, err := probes.ParseMultiReport(bytes.NewReader(line), maxProbeStdout)
	if err != nil {
		res.Err = fmt.Errorf("the probe's second report: %w", err)
		return res
	}
	removed, res.Report, res.ProbeRemoveErr = m.Removed, m.Then, m.Error
	if plan != nil && m.Then == nil {
		res.Err = fmt.Errorf("the probe ran no second plan: %s", m.RootError)
	}
	return res
}
