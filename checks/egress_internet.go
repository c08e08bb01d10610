package checks

import "github.com/ssebench-audit/ssebench-audit/probes"

const EgressInternet = "egress.internet"

var egressInternet = &Check{
	ID:      EgressInternet,
	Title:   "No internet target can be reached over TCP",
	From:    FromRuns,
	Remedy:  "Make the agents network internal and attach runs to nothing else; check firewall rules (a firewalld reload drops Docker's, CVE-2025-54388).",
	Control: ProxyReachable,
	// On a cluster, from a probe pod that the runs' policy selects.
	Backends: []string{BackendDocker, BackendKubernetes},
	Plan: func(in PlanInput) []Planned {
		var ps []Planned
		for _, t := range in.Config.EgressTargets {
			ps = append(ps, Planned{Target: t, Expected: "no TCP connect",
				Tasks: []probes.Task{task("connect", probes.Task{Kind: probes.KindTCP, Address: t})},
				Judge: byRule(RuleBlocked)})
		}
		return ps
	},
}
