package docker

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// waitingEngine plays a probe started with --then-stdin: it reports a
// first line, reads the second plan from stdin and answers it, and says
// whether it removed its copies; the remover's exec succeeds.
type waitingEngine struct {
	API
	removes  bool
	mu       sync.Mutex
	execs    [][]string
	received []string // the second plans, as sent
}

func (e *waitingEngine) ContainerList(context.Context, container.ListOptions) ([]container.Summary, error) {
	return nil, nil // no probe container to sweep
}

func (e *waitingEngine) CopyToContainer(_ context.Context, _, _ string, content io.Reader, _ container.CopyToContainerOptions) error {
	_, _ = io.Copy(io.Discard, content)
	return nil
}

func (e *waitingEngine) ContainerExecCreate(_ context.Context, _ string, o container.ExecOptions) (container.ExecCreateResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.execs = append(e.execs, o.Cmd)
	return container.ExecCreateResponse{ID: "exec"}, nil
}

func (e *waitingEngine) ContainerExecAttach(context.Context, string, container.ExecAttachOptions) (types.HijackedResponse, error) {
	e.mu.Lock()
	cmd := e.execs[len(e.execs)-1]
	e.mu.Unlock()
	host, probe := net.Pipe()
	go func() {
		defer probe.Close()
		out := stdcopy.NewStdWriter(probe, stdcopy.Stdout)
		if !slices.Contains(cmd, "--then-stdin") {
			return // the remover: nothing to say
		}
		first, _ := json.Marshal(probes.MultiReport{Users: []probes.UserReport{}, Root: &probes.Report{Version: "t"}})
		_, _ = out.Write(append(first, '\n'))
		line, _ := bufio.NewReader(probe).ReadBytes('\n')
		e.mu.Lock()
		e.received = append(e.received, string(line))
		e.mu.Unlock()
		last := probes.MultiReport{Users: []probes.UserReport{}, Removed: e.removes}
		var plan probes.Plan
		if json.Unmarshal(line, &plan) == nil {
			rep := probes.Report{Version: "t"}
			for _, t := range plan.Tasks {
				rep.Results = append(rep.Results, probes.Result{ID: t.ID, Kind: t.Kind, Outcome: probes.Refused})
			}
			last.Then = &rep
		}
		if !e.removes {
			last.Error = "remove: busy"
		}
		b, _ := json.Marshal(last)
		_, _ = out.Write(append(b, '\n'))
	}()
	return types.HijackedResponse{Conn: host, Reader: bufio.NewReader(host)}, nil
}

func waitingInRun(t *testing.T, e *waitingEngine) (*session, checks.InRunResult) {
	t.Helper()
	s := &session{api: e, opts: Options{Binary: "/proc/self/exe"}, auditID: "0123456789ab", timeout: 1e9}
	res := s.InRun(context.Background(), checks.Container{ID: "run", Name: "sse-r1", RunID: "r1"}, checks.InRunWork{
		Users: []string{checks.AgentUser}, AsUsers: probes.Plan{TimeoutMS: 1000}, AsRoot: &probes.Plan{TimeoutMS: 1000}, Then: true})
	require.NoError(t, res.Err)
	require.NotNil(t, res.Then, "the probe waits")
	require.NotNil(t, res.Report.Root)
	return s, res
}

// The probe waits with its copies in place; its second plan's report comes
// back, and it removes the copies itself.
func TestFollowupSecondPlan(t *testing.T) {
	e := &waitingEngine{removes: true}
	_, res := waitingInRun(t, e)
	require.Len(t, e.execs, 1)
	assert.Contains(t, e.execs[0], "--then-stdin")
	plan := probes.Plan{TimeoutMS: 1000, Tasks: []probes.Task{{ID: "0/10.0.0.3:4096", Kind: probes.KindTCP, Address: "10.0.0.3:4096"}}}
	f := res.Then.Finish(context.Background(), &plan)
	require.NoError(t, f.Err)
	require.NotNil(t, f.Report)
	assert.Equal(t, "0/10.0.0.3:4096", f.Report.Results[0].ID)
	assert.Empty(t, f.Left)
	assert.Len(t, e.execs, 1, "no second exec: the probe removed its copies")
}

// Without a second plan the probe is told so (an empty line), and a copy it
// could not remove is removed by a second exec.
func TestFollowupNone(t *testing.T) {
	e := &waitingEngine{}
	_, res := waitingInRun(t, e)
	f := res.Then.Finish(context.Background(), nil)
	require.NoError(t, f.Err)
	assert.Nil(t, f.Report)
	assert.Equal(t, "remove: busy", f.ProbeRemoveErr)
	assert.Empty(t, f.Left, "the second exec removed them")
	assert.Equal(t, []string{"\n"}, e.received)
	assert.Len(t, e.execs, 2)
	// Finishing twice does nothing twice.
	assert.Error(t, res.Then.Finish(context.Background(), nil).Err)
}

// A session closed with probes still waiting tells them there is no second
// plan: nothing stays behind.
func TestCloseFinishesWaitingProbes(t *testing.T) {
	e := &waitingEngine{removes: true}
	s, _ := waitingInRun(t, e)
	require.Len(t, s.waiting, 1)
	require.NoError(t, s.Close(context.Background(), false))
	assert.Empty(t, s.waiting)
	assert.Equal(t, []string{"\n"}, e.received)
}
