package checks

import "github.com/ssebench-audit/ssebench-audit/report"

const NetworkAgentsExists = "network.agents.exists"

var networkAgentsExists = &Check{
	ID:     NetworkAgentsExists,
	Title:  "The agents network <project>_agents exists",
	From:   FromHost,
	Remedy: "Start the stack: `ssebench proxy up` (or `docker compose up -d` in deploy/compose).",
	Host: func(in HostInput) []report.Check {
		c := report.Check{Target: AgentsName(in.Dep.Project), Expected: "network exists"}
		if a := in.Dep.Agents; a != nil {
			c.Status, c.Observed = report.Pass, "network "+shortID(a.ID)
		} else {
			c.Status, c.Observed = report.Fail, "no such network"
			c.Message = "the agents network does not exist: the stack is not up"
		}
		return []report.Check{c}
	},
}

// noAgentsNetwork is what the checks of the agents network say without one.
func noAgentsNetwork(d *Deployment) []report.Check {
	return []report.Check{{Status: report.Skip, Target: AgentsName(d.Project), Message: "no agents network"}}
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
