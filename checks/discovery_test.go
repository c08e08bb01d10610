package checks

import (
	"context"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startingEngine knows containers that are on the network but were not in
// the running list (starting, or already removed).
type startingEngine struct {
	Docker
	labels map[string]map[string]string // nil: removed
}

func (e *startingEngine) ContainerInspect(_ context.Context, id string) (container.InspectResponse, error) {
	l, ok := e.labels[id]
	if !ok || l == nil {
		return container.InspectResponse{}, cerrdefs.ErrNotFound
	}
	return container.InspectResponse{ContainerJSONBase: &container.ContainerJSONBase{ID: id, Name: "/" + id},
		Config: &container.Config{Labels: l}}, nil
}

// A concurrent audit's probe that is still starting is an audit probe, not
// a foreign member; one removed meanwhile is no member at all.
func TestCompleteMembers(t *testing.T) {
	d := &Deployment{Project: "p", Containers: map[string]container.Summary{},
		Agents: &network.Inspect{Name: "p_agents", Internal: true, Containers: map[string]network.EndpointResource{
			"probe2": {Name: "probe2", IPv4Address: "10.0.0.9/24"},
			"gone":   {Name: "gone", IPv4Address: "10.0.0.8/24"},
		}}}
	e := &startingEngine{labels: map[string]map[string]string{"probe2": {LabelProbe: "other-audit"}, "gone": nil}}
	require.NoError(t, d.completeMembers(context.Background(), e))
	assert.NotContains(t, d.Agents.Containers, "gone")
	cs := membersChecks(d)
	require.Len(t, cs, 1)
	assert.Equal(t, "pass", string(cs[0].Status), cs[0].Observed)
	assert.Contains(t, cs[0].Observed, "1 audit probes")
}
