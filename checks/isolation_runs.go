package checks

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

const IsolationRuns = "isolation.runs"

// isolationRuns: all runs of a project share the agents network, so a
// server a run listens on with all interfaces lets every other agent
// drive it. Each run's listeners are read from inside it (as root: the
// owning uid and process); every one that is not on loopback is probed
// from the fresh run and from the runs that sample this one.
var isolationRuns = &Check{
	ID:        IsolationRuns,
	Title:     "No run exposes a server of its own to other runs (its agent's servers listen on loopback only)",
	From:      FromInContainer,
	Remedy:    "Bind the run's servers to 127.0.0.1 (OpenCode: `opencode serve --hostname 127.0.0.1`); a server another agent can reach lets it drive this one.",
	Control:   ProxyReachable,
	PerTarget: true,
	Backends:  []string{BackendDocker, BackendKubernetes},
	Plan:      planRunPods,
	Inside: &Inside{
		AsRoot: func(Container) []probes.Task {
			return []probes.Task{task("listeners", probes.Task{Kind: probes.KindListeners})}
		},
		Judge: func(run Container, seen InsideResults) []report.Check {
			c := report.Check{Target: run.RunName(), Expected: "servers of the run on loopback only (the daemon's 4263 aside)"}
			r := seen.Root.Get("listeners").Result
			switch {
			case seen.Err != nil:
				c.Status, c.Observed, c.Message = report.Error, seen.Err.Error(), "could not read what the run listens on"
				return []report.Check{c}
			case r.Outcome != probes.Listed:
				c.Status, c.Observed, c.Message = report.Error, orUnknown(r.Detail+seen.RootErr), "could not read what the run listens on"
				return []report.Check{c}
			}
			var shown, notes []string
			exposed := 0
			for _, l := range r.Listeners {
				s := describeListener(l)
				switch {
				case isLoopback(l.Address):
					s += ": loopback"
				case l.Port == DaemonPort && l.Proto == "tcp":
					s += ": the daemon, judged by daemon.*"
					notes = append(notes, "the daemon's public view on 4263 is judged by the daemon.* checks")
				default:
					exposed++
					s += ": probed from other runs"
				}
				shown = append(shown, s)
			}
			c.Status, c.Observed = report.Pass, strings.Join(shown, "; ")
			if len(shown) == 0 {
				c.Observed = "nothing listens"
			}
			if exposed > 0 {
				c.Message = fmt.Sprintf("%d listeners not on loopback: see this check's rows for %s", exposed, run.RunName())
			} else if len(notes) > 0 {
				c.Message = notes[0]
			}
			return []report.Check{c}
		},
	},
	Reach: func(run Container, d *Deployment, seen InsideResults) []Planned {
		if seen.Err != nil || d.Agents == nil {
			return nil
		}
		var ps []Planned
		for _, l := range seen.Root.Get("listeners").Result.Listeners {
			if isLoopback(l.Address) || (l.Port == DaemonPort && l.Proto == "tcp") {
				continue
			}
			var tasks []probes.Task
			for _, ip := range listenerAddrs(run, d, l) {
				addr := net.JoinHostPort(ip, strconv.Itoa(l.Port))
				kind := probes.KindTCP
				t := probes.Task{Kind: kind, Address: addr}
				if l.Proto == "udp" {
					t.Kind, t.Payload = probes.KindUDP, []byte("ssebench-audit\n")
				}
				tasks = append(tasks, task(addr, t))
			}
			if len(tasks) == 0 {
				continue
			}
			rule := listenerRuleFor(l)
			ps = append(ps, Planned{Target: run.RunName() + " " + describeListener(l), Expected: "not reachable from another run",
				Tasks: tasks, Judge: judgeExposed(rule), TargetRun: run.ID})
		}
		return ps
	},
}

// planRunPods is isolation.runs on a cluster, where no exec reads a run
// pod's listeners yet: from the probe pod, which stands as a run does, the
// daemon's port and the servers listenerRules names, on every run pod.
// ssebench's run policy admits no ingress at all, so on a cluster anything
// reached fails, the daemon included.
func planRunPods(in PlanInput) []Planned {
	c := in.Dep.Cluster
	if c == nil || in.Vantage.Run != nil {
		return nil // on Docker, from inside the runs (Inside, Reach)
	}
	ports := []int{DaemonPort}
	for _, r := range listenerRules {
		if r.port != 0 {
			ports = append(ports, r.port)
		}
	}
	var ps []Planned
	for _, pod := range c.RunPods {
		if len(pod.IPs) == 0 {
			continue // not placed yet: nothing to reach
		}
		blocked := byRule(RuleBlocked)
		ps = append(ps, Planned{Target: "run pod " + pod.Name, Expected: "not reachable: its policy admits no ingress",
			Tasks: tcpTasks(pod.IPs, ports), Judge: func(rs Results) Judgement {
				j := blocked(rs)
				if j.Status == report.Fail {
					j.Message = "reached another run's pod: its policy should admit no ingress (an allow-all policy in the namespace, or a plugin that ignores policies)"
				}
				return j
			}})
	}
	return ps
}

// listenerRule says what it means that another run reaches a listener.
type listenerRule struct {
	port       int  // 0: any
	agentOwned bool // owned by the agent's uid
	status     report.Status
	why        string
}

// listenerRules, first match wins. The daemon's 4263 is not among them:
// its public view is the documented, accepted state, judged by daemon.*.
var listenerRules = []listenerRule{
	{port: 4096, status: fail, why: "OpenCode's server: another agent can drive this agent and read its session"},
	{port: 4098, status: fail, why: "the web UI assistant's OpenCode, which holds a proxy key"},
	{agentOwned: true, status: fail, why: "a server of the agent's own user: another agent can drive it"},
	{port: 3000, status: warn, why: "the run's MCP server"},
	{status: warn, why: "a server of the run that another run reaches"},
}

// agentUID is the agent's uid (the model user).
const agentUID = 1000

func listenerRuleFor(l probes.Listener) listenerRule {
	for _, r := range listenerRules {
		if (r.port == 0 || r.port == l.Port) && (!r.agentOwned || l.UID == agentUID) {
			return r
		}
	}
	return listenerRules[len(listenerRules)-1]
}

// judgeExposed: reached from this vantage means the rule's verdict.
func judgeExposed(rule listenerRule) func(Results) Judgement {
	blocked := byRule(RuleBlocked)
	return func(rs Results) Judgement {
		j := blocked(rs)
		if j.Status == report.Fail {
			j.Status, j.Message = rule.status, "reached: "+rule.why
		}
		return j
	}
}

func describeListener(l probes.Listener) string {
	s := fmt.Sprintf("%s/%s uid %d", net.JoinHostPort(l.Address, strconv.Itoa(l.Port)), l.Proto, l.UID)
	if l.Process != "" {
		s += " (" + printable(l.Process, 80) + ")"
	}
	return s
}

// listenerAddrs are where other runs reach a listener: the run's own
// addresses on the agents network for a wildcard bind, else the address
// it is bound to.
func listenerAddrs(run Container, d *Deployment, l probes.Listener) []string {
	ip := net.ParseIP(l.Address)
	if ip == nil {
		return nil
	}
	if !ip.IsUnspecified() {
		return []string{ip.String()}
	}
	ep := run.Networks[d.Agents.Name]
	out := []string{ep.IPv4}
	if ep.IPv6 != "" && ip.To4() == nil {
		out = append(out, ep.IPv6) // "::" takes IPv6 as well
	}
	return uniq(out)
}

func isLoopback(addr string) bool {
	ip := net.ParseIP(addr)
	return ip != nil && ip.IsLoopback()
}
