package docker

import (
	"context"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/go-connections/nat"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

// startingEngine knows containers that are on the network but were not in
// the running list (starting, or already removed).
type startingEngine struct {
	API
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
func TestNetworkMembers(t *testing.T) {
	b := New(&startingEngine{labels: map[string]map[string]string{"probe2": {LabelProbe: "other-audit"}, "gone": nil}}, Options{})
	n, err := b.toNetwork(context.Background(), network.Inspect{Name: "p_agents", Internal: true,
		IPAM: network.IPAM{Config: []network.IPAMConfig{{Subnet: "10.0.0.0/24", Gateway: "10.0.0.1"}, {Subnet: "fd00:1::/64"}}},
		Containers: map[string]network.EndpointResource{
			"probe2": {Name: "probe2", IPv4Address: "10.0.0.9/24"},
			"gone":   {Name: "gone", IPv4Address: "10.0.0.8/24"},
			"run1":   {Name: "run1", IPv4Address: "10.0.0.7/24"},
		}}, map[string]container.Summary{"run1": {ID: "run1", Labels: map[string]string{LabelRunID: "r1"}}})
	require.NoError(t, err)
	assert.Equal(t, []checks.Member{
		{ID: "probe2", Name: "probe2", Address: "10.0.0.9", Known: true, Probe: true},
		{ID: "run1", Name: "run1", Address: "10.0.0.7", Known: true, Run: true},
	}, n.Members)
	assert.Equal(t, []string{"10.0.0.1"}, n.Gateways, "the IPv6 gateway only with IPv6 on")
}

func TestToContainer(t *testing.T) {
	ci := container.InspectResponse{
		ContainerJSONBase: &container.ContainerJSONBase{ID: "abc", Name: "/sse-r1", State: &container.State{Running: true},
			HostConfig: &container.HostConfig{NetworkMode: "p_agents", PidMode: "host", Privileged: true,
				CapAdd: []string{"NET_ADMIN"}, DNS: []string{"10.0.0.53"}}},
		Config: &container.Config{Labels: map[string]string{LabelRunID: "r1", LabelTaskID: "t1", LabelResults: "/srv/r"},
			Env: []string{"SSE_ADMIN_SOCKET=/run/x.sock"}, ExposedPorts: nat.PortSet{"4263/tcp": {}, "53/udp": {}}},
		Mounts: []container.MountPoint{{Type: mount.TypeBind, Source: "/var/run/docker.sock", Destination: "/s", RW: true}},
		NetworkSettings: &container.NetworkSettings{Networks: map[string]*network.EndpointSettings{
			"p_agents": {IPAddress: "10.0.0.5", Gateway: "10.0.0.1"}},
			NetworkSettingsBase: container.NetworkSettingsBase{Ports: nat.PortMap{"4263/tcp": {{HostIP: "0.0.0.0", HostPort: "4263"}}}}},
	}
	c := toContainer(ci)
	assert.Equal(t, "sse-r1", c.Name)
	assert.True(t, c.Running)
	assert.True(t, c.IsRun())
	assert.Equal(t, "r1", c.RunName())
	assert.Equal(t, []int{4263}, c.ExposedTCP)
	assert.Equal(t, []checks.Binding{{HostIP: "0.0.0.0", HostPort: "4263", Port: "4263/tcp"}}, c.Published)
	assert.Equal(t, map[string]checks.Endpoint{"p_agents": {IPv4: "10.0.0.5", Gateway: "10.0.0.1"}}, c.Networks)
	assert.Equal(t, []string{"10.0.0.53"}, c.DNS)
	v, _ := c.EnvValue("SSE_ADMIN_SOCKET")
	assert.Equal(t, "/run/x.sock", v)
	require.NotNil(t, c.Hardening)
	assert.True(t, c.Hardening.Privileged)
	assert.Equal(t, []string{"PID"}, c.Hardening.HostNamespaces)
	assert.Equal(t, []checks.Mount{{Bind: true, Source: "/var/run/docker.sock", Destination: "/s", RW: true}}, c.Hardening.Mounts)

	bare := toContainer(container.InspectResponse{ContainerJSONBase: &container.ContainerJSONBase{ID: "x", Name: "/x"}})
	assert.Nil(t, bare.Hardening, "no host configuration: not judged as defaults")
}
