package checks

import (
	"net"
	"strconv"

	"github.com/ssebench-audit/ssebench-audit/probes"
)

const ProxyReachable = "proxy.reachable"

// proxyReachable is a positive control: without it, a target that did not
// answer cannot be told blocked from broken.
var proxyReachable = &Check{
	ID:     ProxyReachable,
	Title:  "The proxy answers on its port from where the agent stands (positive control)",
	From:   FromRuns,
	Remedy: "Start the proxy (`ssebench proxy up`); without it the audit cannot tell blocked from broken.",
	// On a cluster, from the probe pod, to the proxy's Service.
	Backends: []string{BackendDocker, BackendKubernetes},
	Plan: func(in PlanInput) []Planned {
		addr := proxyAddr(in.Dep)
		if addr == "" {
			return nil
		}
		return []Planned{{Target: ServiceProxy + " " + addr, Expected: "connects",
			Tasks: []probes.Task{task("connect", probes.Task{Kind: probes.KindTCP, Address: addr})},
			Judge: byRule(RuleReached)}}
	},
}

// proxyAddr is the proxy's host:port on the agents network (or where the
// backend says runs reach it), "" unknown.
func proxyAddr(d *Deployment) string {
	if d.ProxyAddress != "" {
		return d.ProxyAddress
	}
	ip := d.ProxyIP()
	if ip == "" {
		return ""
	}
	return net.JoinHostPort(ip, strconv.Itoa(ProxyPort))
}
