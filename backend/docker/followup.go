package docker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// inRunThen starts the probe in a run with its stdin attached and returns
// once it reported its first line, the probe waiting for a second plan:
// Finish sends it (or none), reads the second line, and sees the copies
// removed. Until then the exec stays open.
func (s *session) inRunThen(ctx context.Context, run checks.Container, self string, copied, cmd []string) checks.InRunResult {
	x, err := s.startExec(ctx, run.ID, "0:0", cmd)
	if err != nil {
		return s.removedAfter(ctx, run, self, copied, checks.InRunResult{Err: fmt.Errorf("running the probe: %w", err)})
	}
	lctx, cancel := context.WithTimeout(ctx, 2*s.timeout+30*time.Second)
	defer cancel()
	line, err := x.line(lctx)
	if err != nil {
		x.close()
		return s.removedAfter(ctx, run, self, copied, checks.InRunResult{Err: fmt.Errorf("running the probe: %w (stderr: %s)", err, x.stderrLine())})
	}
	m, err := probes.ParseMultiReport(bytes.NewReader(line), maxProbeStdout)
	if err != nil {
		x.close()
		return s.removedAfter(ctx, run, self, copied, checks.InRunResult{Err: fmt.Errorf("the in-container probe: %v (stderr: %s)", err, x.stderrLine())})
	}
	f := &followup{s: s, x: x, run: run, self: self, copied: copied}
	s.mu.Lock()
	if s.waiting == nil {
		s.waiting = map[*followup]bool{}
	}
	s.waiting[f] = true
	s.mu.Unlock()
	return checks.InRunResult{Report: m, Then: f}
}

// removedAfter removes the copies with a second exec, for an exec that
// failed, and says what is left.
func (s *session) removedAfter(ctx context.Context, run checks.Container, self string, copied []string, res checks.InRunResult) checks.InRunResult {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	if err := s.execRemove(rctx, run.ID, self, copied); err != nil {
		res.Left, res.RemoveErr = copied, err
	}
	return res
}

// followup is a probe waiting in a run for its second plan.
type followup struct {
	s      *session
	x      *liveExec
	run    checks.Container
	self   string
	copied []string
	once   sync.Once
	// removed: the probe said it removed the copies.
	removed bool
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
	defer func() {
		if res.Err == nil && res.ProbeRemoveErr == "" && f.removed {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		if err := f.s.execRemove(rctx, f.run.ID, f.self, f.copied); err != nil {
			res.Left, res.RemoveErr = f.copied, err
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
	f.removed, res.Report, res.ProbeRemoveErr = m.Removed, m.Then, m.Error
	if plan != nil && m.Then == nil {
		res.Err = fmt.Errorf("the probe ran no second plan: %s", m.RootError)
	}
	return res
}

// liveExec is an exec whose output is read line by line while it runs.
type liveExec struct {
	att    types.HijackedResponse
	lines  *bufio.Reader
	stderr *bytes.Buffer
	errMu  sync.Mutex
}

// startExec starts cmd in a container as user, stdin attached.
func (s *session) startExec(ctx context.Context, id, user string, cmd []string) (*liveExec, error) {
	created, err := s.api.ContainerExecCreate(ctx, id, container.ExecOptions{User: user, Cmd: cmd, Env: execEnv,
		AttachStdin: true, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return nil, err
	}
	att, err := s.api.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, err
	}
	x := &liveExec{att: att, stderr: &bytes.Buffer{}}
	outR, outW := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(outW, &lockedWriter{w: probes.NewLimitWriter(x.stderr, maxProbeStderr), mu: &x.errMu},
			io.LimitReader(att.Reader, 2*maxProbeStdout))
		outW.CloseWithError(err)
	}()
	x.lines = bufio.NewReaderSize(io.LimitReader(outR, maxProbeStdout+1), 64<<10)
	return x, nil
}

// line reads the next line the probe wrote, within ctx.
func (x *liveExec) line(ctx context.Context) ([]byte, error) {
	type read struct {
		b   []byte
		err error
	}
	got := make(chan read, 1)
	go func() {
		b, err := x.lines.ReadBytes('\n')
		got <- read{b, err}
	}()
	select {
	case r := <-got:
		if len(r.b) == 0 && r.err != nil {
			return nil, fmt.Errorf("no report: %w", r.err)
		}
		return r.b, nil
	case <-ctx.Done():
		x.close() // unblocks the read
		return nil, fmt.Errorf("interrupted or timed out: %w", ctx.Err())
	}
}

func (x *liveExec) close() { x.att.Close() }

func (x *liveExec) stderrLine() string {
	x.errMu.Lock()
	defer x.errMu.Unlock()
	return firstLine(x.stderr.Bytes())
}

// lockedWriter lets the demultiplexer write stderr while it is read.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
