package checks

import (
	"net"

	"github.com/ssebench-audit/ssebench-audit/probes"
)

const DNSExternal = "dns.external"

var dnsExternal = &Check{
	ID:      DNSExternal,
	Title:   "Outside names and a unique canary name get no address",
	From:    FromRuns,
	Remedy:  "Keep runs on the internal network only, remove DNS forwarders reachable from it, and upgrade engines affected by CVE-2024-29018.",
	Control: DNSProxy,
	// On a cluster, from the probe pod, through kube-dns: resolving warns.
	Backends: []string{BackendDocker, BackendKubernetes},
	// Each name is asked of the container's own resolver and of every
	// resolver the run was started with; SERVFAIL, REFUSED or no answer
	// pass, NXDOMAIN warns (a resolver that knows outside names answered).
	Plan: func(in PlanInput) []Planned {
		var ps []Planned
		for _, name := range append(append([]string{}, in.Config.ExternalNames...), in.Canary) {
			tasks := []probes.Task{task("own resolver", probes.Task{Kind: probes.KindDNS, Name: name})}
			for _, r := range in.Vantage.Resolvers {
				addr := net.JoinHostPort(r, "53")
				tasks = append(tasks, task(addr, probes.Task{Kind: probes.KindDNS, Name: name, Address: addr}))
			}
			target := name
			if name == in.Canary {
				target += " (canary)"
			}
			rule := RuleNoAddress
			if in.Dep.Cluster != nil {
				rule = RuleClusterDNS
			}
			ps = append(ps, Planned{Target: target, Expected: "no address (SERVFAIL, REFUSED or timeout)",
				Tasks: tasks, Judge: byRule(rule)})
		}
		return ps
	},
}
