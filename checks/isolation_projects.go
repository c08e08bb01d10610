package checks

import (
	"net"
	"sort"
	"strconv"

	"github.com/ssebench-audit/ssebench-audit/probes"
)

const IsolationProjects = "isolation.projects"

var isolationProjects = &Check{
	ID:      IsolationProjects,
	Title:   "Containers of other Compose projects cannot be reached",
	From:    FromFreshRun,
	Remedy:  "Give every project its own networks (distinct COMPOSE_PROJECT_NAME) and connect no container to two projects.",
	Control: ProxyReachable,
	Plan: func(in PlanInput) []Planned {
		if in.Vantage.Run != nil {
			return nil // what a fresh run reaches, every run reaches
		}
		var ps []Planned
		for _, o := range in.Dep.Others {
			var tasks []probes.Task
			for _, addr := range serviceAddrs(o) {
				tasks = append(tasks, task(addr, probes.Task{Kind: probes.KindTCP, Address: addr}))
			}
			if len(tasks) == 0 {
				continue
			}
			target := o.Name
			if o.Project != "" {
				target += " (project " + o.Project + ")"
			}
			ps = append(ps, Planned{Target: target, Expected: "not reachable", Tasks: tasks, Judge: byRule(RuleBlocked)})
		}
		return ps
	},
}

// serviceAddrs lists ip:port for every address and known port of a
// container: its exposed ports and the ports ssebench's services listen on.
func serviceAddrs(c Container) []string {
	ports := map[int]bool{}
	for _, p := range c.ExposedTCP {
		ports[p] = true
	}
	switch {
	case c.Service == ServiceProxy:
		ports[ProxyPort] = true
	case c.Service == ServiceDB:
		ports[DBPort] = true
	case c.IsRun():
		ports[DaemonPort] = true
	}
	ps := make([]int, 0, len(ports))
	for p := range ports {
		ps = append(ps, p)
	}
	sort.Ints(ps)
	var out []string
	for _, ip := range c.IPs() {
		for _, p := range ps {
			out = append(out, net.JoinHostPort(ip, strconv.Itoa(p)))
		}
	}
	return out
}
