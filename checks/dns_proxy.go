package checks

import "github.com/ssebench-audit/ssebench-audit/probes"

const DNSProxy = "dns.proxy"

// dnsProxy is the positive control of the DNS checks.
var dnsProxy = &Check{
	ID:     DNSProxy,
	Title:  "The proxy's name resolves from where the agent stands (positive control)",
	From:   FromRuns,
	Remedy: "Check that the litellm service is on the agents network; without it the audit cannot tell blocked from broken.",
	Plan: func(PlanInput) []Planned {
		return []Planned{{Target: ServiceProxy, Expected: "resolves to an address",
			Tasks: []probes.Task{task("resolve", probes.Task{Kind: probes.KindDNS, Name: ServiceProxy})},
			Judge: byRule(RuleResolves)}}
	},
}
