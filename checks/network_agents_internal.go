package checks

import (
	"fmt"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const NetworkAgentsInternal = "network.agents.internal"

var networkAgentsInternal = &Check{
	ID:     NetworkAgentsInternal,
	Title:  "The agents network is internal (no route out)",
	From:   FromHost,
	Remedy: "Recreate the network with `internal: true` (docker compose down && docker compose up -d with the shipped compose file).",
	Host: func(in HostInput) []report.Check {
		a := in.Dep.Agents
		if a == nil {
			return noAgentsNetwork(in.Dep)
		}
		c := report.Check{Target: a.Name, Expected: "Internal: true", Observed: fmt.Sprintf("Internal: %t", a.Internal),
			Status: report.Pass}
		if !a.Internal {
			c.Status, c.Message = report.Fail, "the agents network has a route out: every run can reach the internet"
		}
		out := []report.Check{c}
		if a.IPv6 {
			out = append(out, ipv6Isolation(a, in.Dep.Engine.Version))
		}
		return out
	},
}

// ipv6Isolation: before Docker 27 no IPv6 isolation rules were installed
// unless ip6tables was enabled (moby#47747), so an IPv6-enabled internal
// network may be open; the ipv6 probes show whether it is.
func ipv6Isolation(a *Network, engineVersion string) report.Check {
	c := report.Check{Target: a.Name + " (IPv6)", Status: report.Pass,
		Expected: "IPv6 isolated (engine 27 or later, or ip6tables enabled)", Observed: "IPv6 enabled, engine " + engineVersion}
	if major := engineMajor(engineVersion); major > 0 && major < 27 {
		c.Status = report.Warn
		c.Message = "engines before 27 install no IPv6 isolation rules unless ip6tables is enabled (moby#47747): see the ipv6 egress checks"
	}
	return c
}
