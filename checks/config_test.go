package checks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
		// Defects of old: these were silently replaced by defaults.
		"negative timeout": {Projects: []string{"p"}, Timeout: -time.Second},
		"negative workers": {Projects: []string{"p"}, Workers: -3},
		"long timeout":     {Projects: []string{"p"}, Timeout: time.Hour},
		// An audit of nothing must never pass.
		"no check left": {Projects: []string{"p"}, Only: []string{DNSProxy}, Skip: []string{DNSProxy}},
		"only itself":   {Projects: []string{"p"}, Only: []string{AuditProbe}},
	} {
		assert.Error(t, c.WithDefaults().Validate(), name)
	}
	// The CLI validates its flags as typed: zero is not "default" there.
	assert.ErrorContains(t, Config{Projects: []string{"p"}, Workers: 1, LiveRunProbe: LiveRunExec}.Validate(), "--timeout")
	assert.ErrorContains(t, Config{Projects: []string{"p"}, Timeout: time.Second, LiveRunProbe: LiveRunExec}.Validate(), "--workers")
	assert.ErrorContains(t, Config{Projects: []string{"p"}, Only: []string{DNSProxy}, Skip: []string{DNSProxy}}.WithDefaults().Validate(),
		"no check left")
}

func TestConfigDefaults(t *testing.T) {
	c := Config{Projects: []string{"p"}}.WithDefaults()
	assert.Equal(t, DefaultProxyTarget, c.ProxyTarget)
	assert.Equal(t, LiveRunExec, c.LiveRunProbe)
	assert.Equal(t, DefaultEgressTargets, c.EgressTargets)
	assert.Equal(t, DefaultTimeout, c.Timeout)
	assert.Equal(t, DefaultWorkers, c.Workers)
	// A user's own internet target is also what the proxy is asked to reach.
	c = Config{Projects: []string{"p"}, EgressTargets: []string{"198.51.100.2:80"}}.WithDefaults()
	assert.Equal(t, "198.51.100.2:80", c.ProxyTarget)
	// What the user set wrong stays wrong, for Validate to say so.
	assert.Equal(t, -3, Config{Workers: -3}.WithDefaults().Workers)
}

func TestWants(t *testing.T) {
	c := Config{Only: []string{DNSProxy, DNSExternal}, Skip: []string{DNSExternal}}
	assert.True(t, c.Wants(DNSProxy))
	assert.False(t, c.Wants(DNSExternal))
	assert.False(t, c.Wants(EgressHost))
	assert.True(t, Config{}.Wants(EgressHost))
	assert.True(t, c.Wants(AuditProbe), "--only does not hide the audit's own errors")
	assert.False(t, Config{Skip: []string{AuditProbe}}.Wants(AuditProbe))
	assert.Equal(t, []string{DNSProxy}, c.Wanted())
}

// A live run's network plan rides on the in-container exec only where that
// exec happens and the user did not ask for joined probe containers.
func TestNetworkInExec(t *testing.T) {
	assert.True(t, Config{}.WithDefaults().NetworkInExec(), "the default")
	assert.False(t, Config{LiveRunProbe: LiveRunContainer}.NetworkInExec())
	assert.True(t, Config{LiveRunProbe: LiveRunExec, Skip: []string{SocketAdmin}}.NetworkInExec(), "isolation.runs execs")
	assert.False(t, Config{LiveRunProbe: LiveRunExec, Skip: []string{SocketAdmin, IsolationRuns}}.NetworkInExec())
	assert.False(t, Config{LiveRunProbe: LiveRunExec, Only: []string{DNSExternal}}.NetworkInExec())
	assert.True(t, Config{LiveRunProbe: LiveRunExec, Only: []string{SocketAdmin}}.NetworkInExec())
}
