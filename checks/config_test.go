package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{Projects: []string{"ssebench"}}.WithDefaults()
	assert.NoError(t, ok.Validate())
	for name, c := range map[string]Config{
		"bad project":   {Projects: []string{"Bad Name"}},
		"no project":    {},
		"bad target":    {Projects: []string{"p"}, EgressTargets: []string{"1.2.3.4"}},
		"bad port":      {Projects: []string{"p"}, HostPorts: []int{70000}},
		"bad dns":       {Projects: []string{"p"}, DNSServers: []string{"resolver"}},
		"unknown check": {Projects: []string{"p"}, Only: []string{"egress.nope"}},
		"bad live-run":  {Projects: []string{"p"}, LiveRunProbe: "ssh"},
	} {
		assert.Error(t, c.WithDefaults().Validate(), name)
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{Projects: []string{"p"}}.WithDefaults()
	assert.Equal(t, DefaultProxyTarget, c.ProxyTarget)
	assert.Equal(t, LiveRunExec, c.LiveRunProbe)
	assert.Equal(t, DefaultEgressTargets, c.EgressTargets)
	// A user's own internet target is also what the proxy is asked to reach.
	c = Config{Projects: []string{"p"}, EgressTargets: []string{"198.51.100.2:80"}}.WithDefaults()
	assert.Equal(t, "198.51.100.2:80", c.ProxyTarget)
}

func TestWanted(t *testing.T) {
	c := Config{Only: []string{"dns.proxy", "dns.external"}, Skip: []string{"dns.external"}}
	assert.True(t, c.Wanted("dns.proxy"))
	assert.False(t, c.Wanted("dns.external"))
	assert.False(t, c.Wanted("egress.host"))
	assert.True(t, Config{}.Wanted("egress.host"))
}

// A live run's network plan rides on the in-container exec only where that
// exec happens and the user did not ask for joined probe containers.
func TestNetworkInExec(t *testing.T) {
	assert.True(t, Config{}.WithDefaults().NetworkInExec(), "the default")
	assert.False(t, Config{LiveRunProbe: LiveRunContainer}.NetworkInExec())
	assert.False(t, Config{LiveRunProbe: LiveRunExec, Skip: []string{catalogue.SocketAdmin}}.NetworkInExec())
	assert.False(t, Config{LiveRunProbe: LiveRunExec, Only: []string{catalogue.DNSExternal}}.NetworkInExec())
	assert.True(t, Config{LiveRunProbe: LiveRunExec, Only: []string{catalogue.SocketAdmin}}.NetworkInExec())
}
