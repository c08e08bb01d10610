package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanVantages(t *testing.T) {
	proxy := service("1", "p-litellm-1", "p", ServiceProxy, "p_agents")
	other := service("9", "q-litellm-1", "q", ServiceProxy, "q_agents")
	d := deployment(true, proxy)
	d.Others = []Container{other}
	cfg := Config{Projects: []string{"p"}, EgressTargets: []string{"198.51.100.2:80", "[2001:db8::1]:80"}, HostPorts: []int{2375}}.WithDefaults()
	in := PlanInput{Config: cfg, Dep: d, Canary: "sba-canary-x.example.com", HostAddresses: []string{"192.0.2.2"}}

	fresh := plan(in, FreshVantage(d))
	ids := map[string]int{}
	for _, p := range fresh {
		ids[p.Check]++
		assert.NotEmpty(t, p.Tasks, p.Check)
		assert.NotNil(t, p.Judge, p.Check)
	}
	assert.Equal(t, 1, ids[IsolationProjects])
	assert.Equal(t, len(cfg.ExternalNames)+1, ids[DNSExternal], "configured names plus the canary")
	assert.Equal(t, 2, ids[EgressHost], "gateway and host addresses")
	assert.Equal(t, 2, ids[EgressProxyForward])
	assert.Equal(t, 1, ids[EgressInternet], "the IPv6 target only where the network has IPv6")
	d.Agents.IPv6 = true
	assert.Len(t, byCheck(plan(in, FreshVantage(d)), EgressInternet), 2)
	d.Agents.IPv6 = false

	run := runCtr("2", "ra", "p_agents")
	run.DNS = []string{"10.0.0.53", "not-an-ip"}
	for _, p := range plan(in, RunVantage(run)) {
		assert.NotEqual(t, IsolationProjects, p.Check, "isolation is a fresh-run check")
		if p.Check == DNSExternal {
			require.Len(t, p.Tasks, 2, "the container's resolver and the run's --dns")
			assert.Equal(t, "10.0.0.53:53", p.Tasks[1].Address)
		}
	}

	in.Config.Skip = []string{EgressHost}
	assert.Empty(t, byCheck(plan(in, FreshVantage(d)), EgressHost))

	// Without a proxy nothing is planned against it.
	d.Proxy = nil
	assert.Empty(t, byCheck(plan(in, FreshVantage(d)), ProxyReachable))
	assert.Empty(t, byCheck(plan(in, FreshVantage(d)), EgressProxyForward))
}

func byCheck(ps []Planned, id string) []Planned {
	var out []Planned
	for _, p := range ps {
		if p.Check == id {
			out = append(out, p)
		}
	}
	return out
}

// Every check of the catalogue is made one way at most (a check made from
// inside runs may also be planned, for a backend with no exec into runs),
// says where from, and what to do; IDs are unique.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range registry {
		assert.False(t, seen[c.ID], "duplicate %s", c.ID)
		seen[c.ID] = true
		ways := 0
		for _, w := range []bool{c.Host != nil, c.Plan != nil && (c.Inside == nil || len(c.backends()) < 2), c.Inside != nil} {
			if w {
				ways++
			}
		}
		assert.LessOrEqual(t, ways, 1, c.ID)
		assert.NotEmpty(t, c.Title, c.ID)
		assert.NotEmpty(t, c.Remedy, c.ID)
		assert.NotEmpty(t, c.From, c.ID)
		if c.Control != "" {
			ctl, ok := Lookup(c.Control)
			if assert.True(t, ok, c.ID) {
				assert.Empty(t, ctl.Control, "%s: a control has no control", c.ID)
			}
		}
	}
	assert.Equal(t, EngineVersion, registry[0].ID)
}
