package docker

import (
	"context"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

// eventEngine streams network events and knows some containers.
type eventEngine struct {
	API
	msgs   chan events.Message
	labels map[string]map[string]string
}

func (e *eventEngine) Events(context.Context, events.ListOptions) (<-chan events.Message, <-chan error) {
	return e.msgs, make(chan error)
}

func (e *eventEngine) ContainerInspect(_ context.Context, id string) (container.InspectResponse, error) {
	l, ok := e.labels[id]
	if !ok {
		return container.InspectResponse{}, cerrdefs.ErrNotFound
	}
	return container.InspectResponse{ContainerJSONBase: &container.ContainerJSONBase{ID: id, Name: "/" + id},
		Config: &container.Config{Labels: l}}, nil
}

func netEvent(action events.Action, network, id string) events.Message {
	return events.Message{Type: events.NetworkEventType, Action: action,
		Actor: events.Actor{Attributes: map[string]string{"name": network, "container": id}}}
}

// Events of the project's networks come through, named by who joined; a
// run removed before its disconnect is still known as that run.
func TestChanges(t *testing.T) {
	e := &eventEngine{msgs: make(chan events.Message, 8), labels: map[string]map[string]string{
		"run1": {LabelRunID: "r1"}, "probe1": {LabelProbe: "abc"}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes, err := New(e, Options{}).Changes(ctx, "p")
	require.NoError(t, err)
	var got []checks.Change
	next := func() {
		select {
		case c := <-changes:
			got = append(got, c)
		case <-time.After(5 * time.Second):
			t.Fatalf("got %v", got)
		}
	}
	e.msgs <- netEvent(events.ActionConnect, "q_agents", "stray") // another project's
	e.msgs <- netEvent(events.ActionConnect, "p_agents", "run1")
	e.msgs <- netEvent(events.ActionConnect, "p_agents", "probe1")
	next()
	next()
	delete(e.labels, "run1") // removed before its disconnect
	e.msgs <- netEvent(events.ActionDisconnect, "p_agents", "run1")
	e.msgs <- netEvent(events.ActionConnect, "p_default", "stray")
	next()
	next()
	assert.Equal(t, []checks.Change{
		{What: "connect", Network: "p_agents", Container: "run1", RunID: "r1"},
		{What: "connect", Network: "p_agents", Container: "probe1", Probe: true},
		{What: "disconnect", Network: "p_agents", Container: "run1", RunID: "r1"},
		{What: "connect", Network: "p_default", Container: "stray"},
	}, got)
}
