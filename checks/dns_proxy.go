package checks

import "github.com/ssebench-audit/ssebench-audit/probes"

const DNSProxy = "dns.proxy"

// dnsProxy is the positive control of the DNS checks.
var dnsProxy = &Check{
	ID:     DNSProxy,
	Title:  "The proxy's name resolves from where the agent stands (positive control)",
	From:   FromRuns,
	Remedy: "Check that the litellm service is on the agents network; without it the audit cannot tell blocked from broken.",
	// On a cluster, the proxy's Service name through kube-dns.
	Backends: []string{BackendDocker, BackendKubernetes},
	Plan: func(in PlanInput) []Planned {
		name := ServiceProxy
		if in.Dep.ProxyName != "" {
			name = in.Dep.ProxyName
		}
		return []Planned{{Target: name, Expected: "resolves to an address",
			Tasks: []probes.Task{task("resolve", probes.Task{Kind: probes.KindDNS, Name: name})},
			Judge: byRule(RuleResolves)}}
	},
}
