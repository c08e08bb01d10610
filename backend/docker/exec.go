package docker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/ssebench-audit/ssebench-audit/backend/inrun"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// execRemove runs, as root, the copied probe at self to stop the probes
// still running any of paths and to remove paths (self among them).
func (s *session) execRemove(ctx context.Context, id, self string, paths []string) error {
	_, stderr, err := s.exec(ctx, id, "0:0", inrun.RemoveCmd(self, paths))
	if err == nil && len(stderr) > 0 {
		err = errors.New(firstLine(stderr))
	}
	return err
}

// removeLeft removes what the audit copied into a run with a second
// exec, on a context of its own (Ctrl-C must not leave them), and returns
// what is left and why.
func (s *session) removeLeft(ctx context.Context, runID, self string, copied []string) ([]string, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	if err := s.execRemove(rctx, runID, self, copied); err != nil {
		return copied, err
	}
	return nil, nil
}

// execEnv blanks, for the probe, what the run's own environment could set
// to change how a Go program runs (the exec inherits that environment), and
// keeps the probe to one core of the run's: its tasks wait on the network,
// and on a busy host one P cost 4% less CPU in all (measured, 20 runs).
var execEnv = []string{"GODEBUG=", "GOGC=", "GOMEMLIMIT=", "GOMAXPROCS=1", "GOTRACEBACK="}

// exec runs cmd in a container as user and returns its bounded output.
func (s *session) exec(ctx context.Context, id, user string, cmd []string) ([]byte, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*s.timeout+30*time.Second)
	defer cancel()
	x, err := s.startExec(ctx, id, user, cmd, false)
	if err != nil {
		return nil, nil, err
	}
	defer x.close()
	out, err := x.read(ctx, func() ([]byte, error) { return io.ReadAll(x.lines) })
	if err != nil {
		return nil, nil, err
	}
	return out, x.stderrBytes(), nil
}

// liveExec is an exec whose output is read line by line while it runs.
type liveExec struct {
	att    types.HijackedResponse
	lines  *bufio.Reader
	stderr *bytes.Buffer
	errMu  sync.Mutex
}

// startExec starts cmd in a container as user, with its stdin attached
// when stdin is set; its output is read as it comes, bounded.
func (s *session) startExec(ctx context.Context, id, user string, cmd []string, stdin bool) (*liveExec, error) {
	created, err := s.api.ContainerExecCreate(ctx, id, container.ExecOptions{User: user, Cmd: cmd, Env: execEnv,
		AttachStdin: stdin, AttachStdout: true, AttachStderr: true})
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

// line reads the next line the command wrote, within ctx.
func (x *liveExec) line(ctx context.Context) ([]byte, error) {
	b, err := x.read(ctx, func() ([]byte, error) { return x.lines.ReadBytes('\n') })
	if len(b) == 0 && err != nil {
		return nil, fmt.Errorf("no report: %w", err)
	}
	return b, nil
}

// read runs one read of the output within ctx: on timeout or Ctrl-C the
// exec is closed, which ends the read.
func (x *liveExec) read(ctx context.Context, read func() ([]byte, error)) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		b, err := read()
		got <- result{b, err}
	}()
	select {
	case r := <-got:
		return r.b, r.err
	case <-ctx.Done():
		x.close()
		return nil, fmt.Errorf("interrupted or timed out: %w", ctx.Err())
	}
}

func (x *liveExec) close() { x.att.Close() }

func (x *liveExec) stderrLine() string { return firstLine(x.stderrBytes()) }

func (x *liveExec) stderrBytes() []byte {
	x.errMu.Lock()
	defer x.errMu.Unlock()
	return bytes.Clone(x.stderr.Bytes())
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
