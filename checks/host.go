package checks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/docker/docker/api/types/container"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// hostChecks are the checks made from the Docker API alone.
func hostChecks(d *Deployment) []report.Check {
	agents := AgentsName(d.Project)
	var out []report.Check
	add := func(c report.Check) { c.Vantage = "host"; out = append(out, c) }

	if d.Agents == nil {
		add(report.Check{ID: catalogue.NetworkAgentsExists, Status: report.Fail, Target: agents,
			Expected: "network exists", Observed: "no such network",
			Message: "the agents network does not exist: the stack is not up"})
		for _, id := range []string{catalogue.NetworkAgentsInternal, catalogue.NetworkAgentsMembers} {
			add(report.Check{ID: id, Status: report.Skip, Target: agents, Message: "no agents network"})
		}
	} else {
		add(report.Check{ID: catalogue.NetworkAgentsExists, Status: report.Pass, Target: agents,
			Expected: "network exists", Observed: "network " + shortID(d.Agents.ID)})
		c := report.Check{ID: catalogue.NetworkAgentsInternal, Target: agents,
			Expected: "Internal: true", Observed: fmt.Sprintf("Internal: %t", d.Agents.Internal)}
		if d.Agents.Internal {
			c.Status = report.Pass
		} else {
			c.Status, c.Message = report.Fail, "the agents network has a route out: every run can reach the internet"
		}
		add(c)
		out = append(out, membersChecks(d)...)
	}
	out = append(out, runNetworksChecks(d, d.Runs)...)
	out = append(out, hardeningChecks(d.Runs)...)
	out = append(out, proxyPublishedCheck(d))
	return out
}

// membersChecks: one fail per endpoint that is not the proxy, a run of the
// project or an audit probe; one pass when there is none.
func membersChecks(d *Deployment) []report.Check {
	var bad []report.Check
	kinds := map[string]int{}
	ids := make([]string, 0, len(d.Agents.Containers))
	for id := range d.Agents.Containers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		ep := d.Agents.Containers[id]
		c, known := d.Containers[id]
		labels := c.Labels
		kind, why := "", ""
		switch {
		case !known:
			why = "a container the audit could not list"
		case labels[LabelProbe] != "":
			kind = "audit probe"
		case labels[LabelComposeProject] == d.Project && labels[LabelComposeService] == ServiceProxy:
			kind = "proxy"
		case IsRun(labels) && labels[LabelComposeProject] == "":
			kind = "run"
		case labels[LabelComposeProject] == d.Project:
			why = fmt.Sprintf("service %q of this project (only %s belongs here)", labels[LabelComposeService], ServiceProxy)
		case labels[LabelComposeProject] != "":
			why = fmt.Sprintf("service %q of another project, %q", labels[LabelComposeService], labels[LabelComposeProject])
		default:
			why = "a container without ssebench or Compose labels"
		}
		if kind != "" {
			kinds[kind]++
			continue
		}
		bad = append(bad, report.Check{ID: catalogue.NetworkAgentsMembers, Status: report.Fail, Vantage: "host",
			Target: ep.Name, Expected: "proxy, runs and audit probes only",
			Observed: fmt.Sprintf("%s (%s) on %s", ep.Name, strings.Split(ep.IPv4Address, "/")[0], d.Agents.Name),
			Message:  "unexpected member: " + why})
	}
	if len(bad) > 0 {
		return bad
	}
	return []report.Check{{ID: catalogue.NetworkAgentsMembers, Status: report.Pass, Vantage: "host",
		Target: d.Agents.Name, Expected: "proxy, runs and audit probes only",
		Observed: fmt.Sprintf("%d proxy, %d runs, %d audit probes", kinds["proxy"], kinds["run"], kinds["audit probe"])}}
}

// runNetworksChecks: a restricted run must be on the agents network and
// nothing else; a run on default only is an open run and is not judged.
func runNetworksChecks(d *Deployment, runs []container.InspectResponse) []report.Check {
	var out []report.Check
	for _, r := range runs {
		nets := runNetworks(r)
		c := report.Check{ID: catalogue.RunNetworks, Vantage: "host", Target: RunName(r),
			Expected: "attached to " + AgentsName(d.Project) + " only", Observed: strings.Join(nets, ", ")}
		switch {
		case r.HostConfig != nil && r.HostConfig.NetworkMode.IsHost():
			c.Status, c.Message = report.Fail, "the run shares the host's network"
		case len(nets) == 1 && nets[0] == AgentsName(d.Project):
			c.Status = report.Pass
		case !d.Restricted(r):
			c.Status, c.Message = report.Skip, "open-egress run (not on the agents network): not judged"
		default:
			c.Status, c.Message = report.Fail, "a restricted run is also attached to a network with a way out"
		}
		out = append(out, c)
	}
	return out
}

func runNetworks(r container.InspectResponse) []string {
	var nets []string
	if r.NetworkSettings != nil {
		for n := range r.NetworkSettings.Networks {
			nets = append(nets, n)
		}
	}
	sort.Strings(nets)
	return nets
}

func proxyPublishedCheck(d *Deployment) report.Check {
	c := report.Check{ID: catalogue.ProxyPublished, Vantage: "host", Target: ServiceProxy,
		Expected: "host port bound to 127.0.0.1 or ::1"}
	if d.Proxy == nil {
		c.Status, c.Message = report.Skip, "no proxy container found"
		return c
	}
	c.Target = ContainerName(*d.Proxy)
	var binds []string
	exposed := false
	if d.Proxy.NetworkSettings != nil {
		for port, bs := range d.Proxy.NetworkSettings.Ports {
			for _, b := range bs {
				binds = append(binds, fmt.Sprintf("%s:%s->%s", b.HostIP, b.HostPort, port))
				if b.HostIP != "127.0.0.1" && b.HostIP != "::1" {
					exposed = true
				}
			}
		}
	}
	sort.Strings(binds)
	switch {
	case len(binds) == 0:
		c.Status, c.Observed = report.Pass, "not published"
	case exposed:
		c.Status, c.Observed = report.Warn, strings.Join(binds, ", ")
		c.Message = "the proxy (and its API keys' budget) is reachable from every network the host is on"
	default:
		c.Status, c.Observed = report.Pass, strings.Join(binds, ", ")
	}
	return c
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
