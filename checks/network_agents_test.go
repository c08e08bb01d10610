package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/report"
)

func TestAgentsNetworkChecks(t *testing.T) {
	proxy := service("1", "p-litellm-1", "p", ServiceProxy, "p_agents", "p_default")
	run := runCtr("2", "ra", "p_agents")
	good := deployment(true, proxy, run)
	good.Agents.Members = append(good.Agents.Members, Member{ID: "3", Name: "probe", Known: true, Probe: true})

	assert.Equal(t, report.Pass, statusOf(host(networkAgentsExists, good), NetworkAgentsExists, ""))
	assert.Equal(t, report.Pass, statusOf(host(networkAgentsInternal, good), NetworkAgentsInternal, ""))
	members := host(networkAgentsMembers, good)
	require.Len(t, members, 1)
	assert.Equal(t, report.Pass, members[0].Status)
	assert.Equal(t, "1 proxy, 1 runs, 1 audit probes", members[0].Observed)

	assert.Equal(t, report.Fail, statusOf(host(networkAgentsInternal, deployment(false, proxy)), NetworkAgentsInternal, ""))

	db := service("4", "p-litellm_db-1", "p", ServiceDB, "p_agents", "p_default")
	stray := ctr("5", "stray", "p_agents")
	other := service("6", "q-litellm-1", "q", ServiceProxy, "p_agents")
	bad := host(networkAgentsMembers, deployment(true, proxy, run, db, stray, other))
	assert.Equal(t, report.Fail, statusOf(bad, NetworkAgentsMembers, "p-litellm_db-1"))
	assert.Equal(t, report.Fail, statusOf(bad, NetworkAgentsMembers, "stray"))
	assert.Equal(t, report.Fail, statusOf(bad, NetworkAgentsMembers, "q-litellm-1"))
	assert.Equal(t, report.Status("missing"), statusOf(bad, NetworkAgentsMembers, "p-litellm-1"))

	missing := &Deployment{Project: "p"}
	assert.Equal(t, report.Fail, statusOf(host(networkAgentsExists, missing), NetworkAgentsExists, ""))
	assert.Equal(t, report.Skip, statusOf(host(networkAgentsInternal, missing), NetworkAgentsInternal, ""))
	assert.Equal(t, report.Skip, statusOf(host(networkAgentsMembers, missing), NetworkAgentsMembers, ""))
}

// Before engine 27 an IPv6 agents network gets no isolation rules of its
// own: a second row of network.agents.internal warns.
func TestIPv6Isolation(t *testing.T) {
	d := deployment(true)
	d.Agents.IPv6 = true
	d.Engine.Version = "20.10.24"
	cs := host(networkAgentsInternal, d)
	require.Len(t, cs, 2)
	assert.Equal(t, report.Warn, statusOf(cs, NetworkAgentsInternal, "p_agents (IPv6)"))
	d.Engine.Version = "27.0.1"
	assert.Equal(t, report.Pass, statusOf(host(networkAgentsInternal, d), NetworkAgentsInternal, "p_agents (IPv6)"))
}

func TestRunNetworks(t *testing.T) {
	proxy := service("1", "p-litellm-1", "p", ServiceProxy, "p_agents")
	good := runCtr("2", "ra", "p_agents")
	dual := runCtr("7", "rb", "p_agents", "p_default")
	open := runCtr("8", "rc", "p_default")
	hostNet := runCtr("9", "rd")
	hostNet.HostNetwork = true
	cs := host(runNetworks, deployment(true, proxy, good, dual, open, hostNet))
	assert.Equal(t, report.Pass, statusOf(cs, RunNetworks, "ra"))
	assert.Equal(t, report.Fail, statusOf(cs, RunNetworks, "rb"))
	assert.Equal(t, report.Skip, statusOf(cs, RunNetworks, "rc"))
	assert.Equal(t, report.Fail, statusOf(cs, RunNetworks, "rd"))
}

func TestProxyPublished(t *testing.T) {
	proxy := service("1", "p-litellm-1", "p", ServiceProxy, "p_agents")
	d := deployment(true)
	d.Proxy = &proxy
	proxy.Published = []Binding{{HostIP: "127.0.0.1", HostPort: "4000", Port: "4000/tcp"}}
	assert.Equal(t, report.Pass, host(proxyPublished, d)[0].Status)
	proxy.Published = []Binding{{HostIP: "0.0.0.0", HostPort: "4000", Port: "4000/tcp"}}
	c := host(proxyPublished, d)[0]
	assert.Equal(t, report.Warn, c.Status)
	assert.Equal(t, "0.0.0.0:4000->4000/tcp", c.Observed)
	d.Proxy = nil
	assert.Equal(t, report.Skip, host(proxyPublished, d)[0].Status)
}
