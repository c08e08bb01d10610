package checks

import (
	"net"

	"github.com/ssebench-audit/ssebench-audit/probes"
)

const EgressDNSDirect = "egress.dns-direct"

var egressDNSDirect = &Check{
	ID:      EgressDNSDirect,
	Title:   "Outside resolvers cannot be queried directly (UDP and TCP)",
	From:    FromRuns,
	Remedy:  "Make the agents network internal and attach runs to nothing else.",
	Control: ProxyReachable,
	// On a cluster, from a probe pod that the runs' policy selects.
	Backends: []string{BackendDocker, BackendKubernetes},
	Plan: func(in PlanInput) []Planned {
		name := in.Config.ExternalNames[0]
		var ps []Planned
		for _, s := range in.Config.DNSServers {
			addr := net.JoinHostPort(s, "53")
			ps = append(ps, Planned{Target: addr, Expected: "no answer over UDP or TCP",
				Tasks: []probes.Task{
					task("udp", probes.Task{Kind: probes.KindDNS, Name: name, Address: addr, Transport: "udp"}),
					task("tcp", probes.Task{Kind: probes.KindDNS, Name: name, Address: addr, Transport: "tcp"}),
				},
				Judge: byRule(RuleNoAnswer)})
		}
		return ps
	},
}
