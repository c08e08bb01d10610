package checks

import (
	"strings"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const RunNetworks = "run.networks"

var runNetworks = &Check{
	ID:     RunNetworks,
	Title:  "Every restricted run is attached to the agents network and nothing else",
	From:   FromHost,
	Remedy: "Stop the run and start it again with `--egress restricted`; never `docker network connect` a run to another network.",
	PerRun: true,
	// A run on default only is an open run and is not judged.
	Host: func(in HostInput) []report.Check {
		agents := AgentsName(in.Dep.Project)
		var out []report.Check
		for _, r := range in.Runs {
			nets := r.NetworkNames()
			c := report.Check{Target: r.RunName(), Expected: "attached to " + agents + " only", Observed: strings.Join(nets, ", ")}
			switch {
			case r.HostNetwork:
				c.Status, c.Message = report.Fail, "the run shares the host's network"
			case len(nets) == 1 && nets[0] == agents:
				c.Status = report.Pass
			case !in.Dep.Restricted(r):
				c.Status, c.Message = report.Skip, "open-egress run (not on the agents network): not judged"
			default:
				c.Status, c.Message = report.Fail, "a restricted run is also attached to a network with a way out"
			}
			out = append(out, c)
		}
		return out
	},
}
