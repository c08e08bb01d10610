package docker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"slices"
	"testing"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// execEngine copies files into a run and answers execs as scripted: the
// probe's report for the exec with --as, the remover's stderr otherwise.
type execEngine struct {
	API
	copyErr  error
	report   probes.MultiReport
	removeOK bool
	copied   []string
	execs    [][]string
}

func (e *execEngine) CopyToContainer(_ context.Context, _, _ string, content io.Reader, _ container.CopyToContainerOptions) error {
	_, _ = io.Copy(io.Discard, content)
	e.copied = append(e.copied, "copy")
	return e.copyErr
}

func (e *execEngine) ContainerExecCreate(_ context.Context, _ string, o container.ExecOptions) (container.ExecCreateResponse, error) {
	e.execs = append(e.execs, o.Cmd)
	return container.ExecCreateResponse{ID: "exec"}, nil
}

func (e *execEngine) ContainerExecAttach(context.Context, string, container.ExecAttachOptions) (types.HijackedResponse, error) {
	var framed bytes.Buffer
	cmd := e.execs[len(e.execs)-1]
	if slices.Contains(cmd, "--as") {
		out, _ := json.Marshal(e.report)
		_, _ = stdcopy.NewStdWriter(&framed, stdcopy.Stdout).Write(append(out, '\n'))
	} else if !e.removeOK {
		_, _ = stdcopy.NewStdWriter(&framed, stdcopy.Stderr).Write([]byte("remove /.sba-probe-x: device or resource busy\n"))
	}
	conn, other := net.Pipe()
	_ = other.Close()
	return types.HijackedResponse{Conn: conn, Reader: bufio.NewReader(&framed)}, nil
}

func inRun(t *testing.T, e *execEngine) checks.InRunResult {
	t.Helper()
	s := &session{api: e, opts: Options{Binary: "/proc/self/exe"}, auditID: "0123456789ab", timeout: 1}
	return s.InRun(context.Background(), checks.Container{ID: "run", Name: "sse-r1", RunID: "r1"}, checks.InRunWork{
		Users: []string{checks.AgentUser}, AsUsers: probes.Plan{TimeoutMS: 1000}, AsRoot: &probes.Plan{TimeoutMS: 1000}})
}

// The probe removed its copies: one exec, nothing left.
func TestInRunRemoves(t *testing.T) {
	e := &execEngine{report: probes.MultiReport{Removed: true, Root: &probes.Report{}}}
	res := inRun(t, e)
	require.NoError(t, res.Err)
	assert.Empty(t, res.Left)
	require.Len(t, e.execs, 1)
	assert.Contains(t, e.execs[0], "--root-plan")
	assert.Contains(t, e.execs[0], "/.sba-root-0123456789ab.json")
}

// The probe could not remove its copies: a second exec does; when that
// fails too, the copies left are returned, with why.
func TestInRunLeftCopies(t *testing.T) {
	e := &execEngine{report: probes.MultiReport{Error: "read-only", Root: &probes.Report{}}, removeOK: true}
	res := inRun(t, e)
	require.NoError(t, res.Err)
	assert.Empty(t, res.Left)
	assert.Len(t, e.execs, 2, "a second exec removed them")

	e = &execEngine{report: probes.MultiReport{Error: "read-only"}}
	res = inRun(t, e)
	require.NoError(t, res.Err, "the probe's report is still good")
	assert.Equal(t, []string{"/.sba-probe-0123456789ab", "/.sba-plan-0123456789ab.json", "/.sba-root-0123456789ab.json"}, res.Left)
	assert.ErrorContains(t, res.RemoveErr, "device or resource busy")
}

// Nothing copied, nothing to remove: the error is the result.
func TestInRunCopyFails(t *testing.T) {
	e := &execEngine{copyErr: errors.New("read-only file system")}
	res := inRun(t, e)
	assert.ErrorContains(t, res.Err, "copying the probe into the run: read-only file system")
	assert.Empty(t, e.execs)
	assert.Empty(t, res.Left)
}
