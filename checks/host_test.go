package checks

import (
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/go-connections/nat"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/report"
)

func inspect(id, name string, labels map[string]string, nets ...string) container.InspectResponse {
	eps := map[string]*network.EndpointSettings{}
	for _, n := range nets {
		eps[n] = &network.EndpointSettings{IPAddress: "10.0.0." + id}
	}
	return container.InspectResponse{
		ContainerJSONBase: &container.ContainerJSONBase{ID: id, Name: "/" + name, HostConfig: &container.HostConfig{},
			State: &container.State{Running: true}},
		Config:          &container.Config{Labels: labels},
		NetworkSettings: &container.NetworkSettings{Networks: eps},
	}
}

// deployment builds a project "p" whose agents network holds members.
func deployment(internal bool, members ...container.InspectResponse) *Deployment {
	d := &Deployment{Project: "p", Containers: map[string]container.Summary{},
		Agents: &network.Inspect{Name: "p_agents", ID: "agentsnet", Internal: internal, Containers: map[string]network.EndpointResource{}}}
	for _, m := range members {
		d.Containers[m.ID] = container.Summary{ID: m.ID, Labels: m.Config.Labels}
		if _, on := m.NetworkSettings.Networks["p_agents"]; on {
			d.Agents.Containers[m.ID] = network.EndpointResource{Name: ContainerName(m), IPv4Address: "10.0.0." + m.ID + "/24"}
		}
		if IsRun(m.Config.Labels) {
			d.Runs = append(d.Runs, m)
		}
	}
	return d
}

func statusOf(cs []report.Check, id, target string) report.Status {
	for _, c := range cs {
		if c.ID == id && (target == "" || c.Target == target) {
			return c.Status
		}
	}
	return "missing"
}

func TestHostChecks(t *testing.T) {
	proxy := inspect("1", "p-litellm-1", map[string]string{LabelComposeProject: "p", LabelComposeService: ServiceProxy}, "p_agents", "p_default")
	run := inspect("2", "run-a", map[string]string{LabelRunID: "ra", LabelWebUI: "true"}, "p_agents")
	probe := inspect("3", "probe", map[string]string{LabelProbe: "x"}, "p_agents")

	good := hostChecks(deployment(true, proxy, run, probe))
	assert.Equal(t, report.Pass, statusOf(good, catalogue.NetworkAgentsInternal, ""))
	assert.Equal(t, report.Pass, statusOf(good, catalogue.NetworkAgentsMembers, ""))
	assert.Equal(t, report.Pass, statusOf(good, catalogue.RunNetworks, "ra"))

	assert.Equal(t, report.Fail, statusOf(hostChecks(deployment(false, proxy)), catalogue.NetworkAgentsInternal, ""))

	db := inspect("4", "p-litellm_db-1", map[string]string{LabelComposeProject: "p", LabelComposeService: ServiceDB}, "p_agents", "p_default")
	foreign := inspect("5", "stray", map[string]string{}, "p_agents")
	other := inspect("6", "q-litellm-1", map[string]string{LabelComposeProject: "q", LabelComposeService: ServiceProxy}, "p_agents")
	bad := hostChecks(deployment(true, proxy, run, db, foreign, other))
	assert.Equal(t, report.Fail, statusOf(bad, catalogue.NetworkAgentsMembers, "p-litellm_db-1"))
	assert.Equal(t, report.Fail, statusOf(bad, catalogue.NetworkAgentsMembers, "stray"))
	assert.Equal(t, report.Fail, statusOf(bad, catalogue.NetworkAgentsMembers, "q-litellm-1"))
	assert.Equal(t, report.Status("missing"), statusOf(bad, catalogue.NetworkAgentsMembers, "p-litellm-1"))

	dual := inspect("7", "run-b", map[string]string{LabelRunID: "rb"}, "p_agents", "p_default")
	open := inspect("8", "run-c", map[string]string{LabelRunID: "rc"}, "p_default")
	cs := hostChecks(deployment(true, proxy, dual, open))
	assert.Equal(t, report.Fail, statusOf(cs, catalogue.RunNetworks, "rb"))
	assert.Equal(t, report.Skip, statusOf(cs, catalogue.RunNetworks, "rc"))

	missing := hostChecks(&Deployment{Project: "p"})
	assert.Equal(t, report.Fail, statusOf(missing, catalogue.NetworkAgentsExists, ""))
	assert.Equal(t, report.Skip, statusOf(missing, catalogue.NetworkAgentsInternal, ""))
}

func TestProxyPublished(t *testing.T) {
	proxy := inspect("1", "p-litellm-1", map[string]string{LabelComposeProject: "p", LabelComposeService: ServiceProxy}, "p_agents")
	d := deployment(true)
	d.Proxy = &proxy
	proxy.NetworkSettings.Ports = nat.PortMap{"4000/tcp": {{HostIP: "127.0.0.1", HostPort: "4000"}}}
	assert.Equal(t, report.Pass, proxyPublishedCheck(d).Status)
	proxy.NetworkSettings.Ports = nat.PortMap{"4000/tcp": {{HostIP: "0.0.0.0", HostPort: "4000"}}}
	assert.Equal(t, report.Warn, proxyPublishedCheck(d).Status)
	d.Proxy = nil
	assert.Equal(t, report.Skip, proxyPublishedCheck(d).Status)
}

func TestPlanVantages(t *testing.T) {
	proxy := inspect("1", "p-litellm-1", map[string]string{LabelComposeProject: "p", LabelComposeService: ServiceProxy}, "p_agents")
	other := inspect("9", "q-litellm-1", map[string]string{LabelComposeProject: "q", LabelComposeService: ServiceProxy}, "q_agents")
	d := deployment(true)
	d.Proxy = &proxy
	d.Others = []container.InspectResponse{other}
	cfg := Config{Projects: []string{"p"}, EgressTargets: []string{"198.51.100.2:80"}, HostPorts: []int{2375}}.WithDefaults()
	in := activeInputs{cfg: cfg, dep: d, canary: "sba-canary-x.example.com", hostAddresses: []string{"192.0.2.2"}}

	fresh := in.plan(vantage{Name: "fresh-run", Gateways: []string{"10.0.0.254"}})
	ids := map[string]int{}
	for _, p := range fresh {
		ids[p.Check]++
		assert.NotEmpty(t, p.Tasks, p.Check)
	}
	assert.Equal(t, 1, ids[catalogue.IsolationProjects])
	assert.Equal(t, len(cfg.ExternalNames)+1, ids[catalogue.DNSExternal], "configured names plus the canary")
	assert.Equal(t, 2, ids[catalogue.EgressHost], "gateway and host addresses")
	assert.Equal(t, 2, ids[catalogue.EgressProxyForward])

	run := inspect("2", "run-a", map[string]string{LabelRunID: "ra"}, "p_agents")
	run.HostConfig.DNS = []string{"10.0.0.53"}
	live := in.plan(runVantage(run))
	for _, p := range live {
		assert.NotEqual(t, catalogue.IsolationProjects, p.Check, "isolation is a fresh-run check")
		if p.Check == catalogue.DNSExternal {
			require.Len(t, p.Tasks, 2, "the container's resolver and the run's --dns")
			assert.Equal(t, "10.0.0.53:53", p.Tasks[1].Address)
		}
	}

	in.cfg.Skip = []string{catalogue.EgressHost}
	for _, p := range in.plan(vantage{Name: "fresh-run"}) {
		assert.NotEqual(t, catalogue.EgressHost, p.Check)
	}
}
