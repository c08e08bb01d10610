package checks

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/probes"
)

const EgressHost = "egress.host"

var egressHost = &Check{
	ID:      EgressHost,
	Title:   "No host service answers on the gateway or the host's addresses",
	From:    FromRuns,
	Remedy:  "Bind host services to 127.0.0.1, or drop traffic from the agents bridge to the host (iptables INPUT rule on the bridge; Docker 28: gateway_mode_ipv4=isolated). On Kubernetes: firewall node services from the pod network on the node, block 169.254.169.254 (or use IMDSv2 with a hop limit of 1), and give run pods no token.",
	Control: ProxyReachable,
	// On a cluster, from a probe pod that the runs' policy selects: the
	// nodes, the API server, cloud metadata, a node-local DNS cache.
	Backends: []string{BackendDocker, BackendKubernetes},
	Plan: func(in PlanInput) []Planned {
		if in.Dep.Cluster != nil {
			return planClusterHosts(in)
		}
		// One row for the gateways and one for the host's other addresses:
		// the evidence names every address and port that answered.
		gateways := uniq(in.Vantage.Gateways)
		var others []string
		for _, a := range uniq(in.HostAddresses) {
			if !slices.Contains(gateways, a) {
				others = append(others, a)
			}
		}
		expected := fmt.Sprintf("no service answers on %d ports", len(in.Config.HostPorts))
		var ps []Planned
		for _, group := range []struct {
			target string
			addrs  []string
		}{
			{"gateway " + strings.Join(gateways, ", "), gateways},
			{fmt.Sprintf("host addresses (%d)", len(others)), others},
		} {
			if len(group.addrs) == 0 {
				continue
			}
			ps = append(ps, Planned{Target: group.target, Expected: expected,
				Tasks: tcpTasks(group.addrs, in.Config.HostPorts), Judge: byRule(RuleBlocked)})
		}
		return ps
	},
}

// planClusterHosts is egress.host from where a run pod stands: every node's
// addresses on the host ports and the kubelet's, the API server's Service
// (a failure where run pods hold a token to use on it), cloud metadata and
// a node-local DNS cache. What the node serves may answer (RuleOwnNode);
// metadata must not.
func planClusterHosts(in PlanInput) []Planned {
	c := in.Dep.Cluster
	var ps []Planned
	var addrs, names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name)
		addrs = append(addrs, n.Addresses...)
	}
	ports := uniqInts(append(slices.Clone(in.Config.HostPorts), in.Config.KubeletPorts...))
	if addrs = uniq(addrs); len(addrs) > 0 {
		ps = append(ps, Planned{Target: fmt.Sprintf("nodes %s (%d addresses)", strings.Join(names, ", "), len(addrs)),
			Expected: fmt.Sprintf("no service answers on %d ports", len(ports)),
			Tasks:    tcpTasks(addrs, ports), Judge: byRule(RuleOwnNode)})
	}
	if c.APIServer != "" {
		rule, expected := RuleOwnNode, "not reachable (it may be: the policy model lets a pod reach its node)"
		if c.TokenInRuns() {
			rule, expected = RuleBlocked, "not reachable: run pods hold a service-account token to use on it"
		}
		ps = append(ps, Planned{Target: "API server " + c.APIServer, Expected: expected,
			Tasks: []probes.Task{task(c.APIServer, probes.Task{Kind: probes.KindTCP, Address: c.APIServer})}, Judge: byRule(rule)})
	}
	for _, group := range []struct {
		target  string
		targets []string
		rule    Rule
	}{
		{"cloud metadata", in.Config.MetadataTargets, RuleBlocked},
		{"node-local DNS", in.Config.NodeLocalDNS, RuleOwnNode},
	} {
		var tasks []probes.Task
		for _, t := range group.targets {
			tasks = append(tasks, task(t, probes.Task{Kind: probes.KindTCP, Address: t}))
		}
		if len(tasks) > 0 {
			ps = append(ps, Planned{Target: group.target + " " + strings.Join(group.targets, ", "), Expected: "not reachable",
				Tasks: tasks, Judge: byRule(group.rule)})
		}
	}
	return ps
}

// tcpTasks connects to every address on every port.
func tcpTasks(addrs []string, ports []int) []probes.Task {
	var tasks []probes.Task
	for _, a := range addrs {
		for _, port := range ports {
			addr := net.JoinHostPort(a, strconv.Itoa(port))
			tasks = append(tasks, task(addr, probes.Task{Kind: probes.KindTCP, Address: addr}))
		}
	}
	return tasks
}

func uniqInts(xs []int) []int {
	slices.Sort(xs)
	return slices.Compact(xs)
}
