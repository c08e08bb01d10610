package checks

import (
	"github.com/ssebench-audit/ssebench-audit/report"
)

// ctr is a running container of project "p" attached to nets, with the
// address 10.0.0.<id> on each.
func ctr(id, name string, nets ...string) Container {
	c := Container{ID: id, Name: name, Running: true, Networks: map[string]Endpoint{}, Hardening: &Hardening{}}
	for _, n := range nets {
		c.Networks[n] = Endpoint{IPv4: "10.0.0." + id, Gateway: "10.0.0.254"}
	}
	return c
}

func runCtr(id, runID string, nets ...string) Container {
	c := ctr(id, "run-"+runID, nets...)
	c.RunID = runID
	return c
}

func service(id, name, project, svc string, nets ...string) Container {
	c := ctr(id, name, nets...)
	c.Project, c.Service = project, svc
	return c
}

// deployment builds project "p": an agents network holding every given
// container attached to it, and the runs among them.
func deployment(internal bool, cs ...Container) *Deployment {
	d := &Deployment{Project: "p", Engine: Engine{Version: "28.5.2"},
		Agents: &Network{Name: "p_agents", ID: "agentsnet", Internal: internal, Gateways: []string{"10.0.0.254"}}}
	for _, c := range cs {
		if _, on := c.Networks["p_agents"]; on {
			d.Agents.Members = append(d.Agents.Members, Member{ID: c.ID, Name: c.Name, Address: c.Networks["p_agents"].IPv4,
				Known: true, Run: c.IsRun(), Project: c.Project, Service: c.Service})
		}
		switch {
		case c.IsRun():
			d.Runs = append(d.Runs, c)
		case c.Project == "p" && c.Service == ServiceProxy:
			d.Proxy = &c
		}
	}
	return d
}

// host makes one host check on a deployment, as the audit does.
func host(c *Check, d *Deployment) []report.Check {
	cs := c.Host(HostInput{Config: Config{}.WithDefaults(), Dep: d, Runs: d.Runs})
	for i := range cs {
		cs[i].ID = c.ID
	}
	return cs
}

func statusOf(cs []report.Check, id, target string) report.Status {
	for _, c := range cs {
		if c.ID == id && (target == "" || c.Target == target) {
			return c.Status
		}
	}
	return "missing"
}
