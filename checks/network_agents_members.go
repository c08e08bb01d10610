package checks

import (
	"fmt"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const NetworkAgentsMembers = "network.agents.members"

var networkAgentsMembers = &Check{
	ID:     NetworkAgentsMembers,
	Title:  "Only the proxy, the project's runs and audit probes are on the agents network",
	From:   FromHost,
	Remedy: "Disconnect the container: `docker network disconnect <project>_agents <container>`; keep databases and helpers on `default` only.",
	Host: func(in HostInput) []report.Check {
		a := in.Dep.Agents
		if a == nil {
			return noAgentsNetwork(in.Dep)
		}
		const expected = "proxy, runs and audit probes only"
		var bad []report.Check
		kinds := map[string]int{}
		for _, m := range a.Members {
			kind, why := memberKind(m, in.Dep.Project)
			if kind != "" {
				kinds[kind]++
				continue
			}
			bad = append(bad, report.Check{Status: report.Fail, Target: m.Name, Expected: expected,
				Observed: fmt.Sprintf("%s (%s) on %s", m.Name, m.Address, a.Name), Message: "unexpected member: " + why})
		}
		if len(bad) > 0 {
			return bad
		}
		return []report.Check{{Status: report.Pass, Target: a.Name, Expected: expected,
			Observed: fmt.Sprintf("%d proxy, %d runs, %d audit probes", kinds["proxy"], kinds["run"], kinds["audit probe"])}}
	},
}

// memberKind says what an agents-network member is allowed as, or why it
// is not allowed.
func memberKind(m Member, project string) (kind, why string) {
	switch {
	case !m.Known:
		return "", "a container the audit could not list"
	case m.Probe:
		return "audit probe", ""
	case m.Project == project && m.Service == ServiceProxy:
		return "proxy", ""
	case m.Run && m.Project == "":
		return "run", ""
	case m.Project == project:
		return "", fmt.Sprintf("service %q of this project (only %s belongs here)", m.Service, ServiceProxy)
	case m.Project != "":
		return "", fmt.Sprintf("service %q of another project, %q", m.Service, m.Project)
	}
	return "", "a container without ssebench or Compose labels"
}
