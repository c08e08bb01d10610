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
	Remedy:  "Bind host services to 127.0.0.1, or drop traffic from the agents bridge to the host (iptables INPUT rule on the bridge; Docker 28: gateway_mode_ipv4=isolated).",
	Control: ProxyReachable,
	// One row for the gateways and one for the host's other addresses: the
	// evidence names every address and port that answered.
	Plan: func(in PlanInput) []Planned {
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
			var tasks []probes.Task
			for _, a := range group.addrs {
				for _, port := range in.Config.HostPorts {
					addr := net.JoinHostPort(a, strconv.Itoa(port))
					tasks = append(tasks, task(addr, probes.Task{Kind: probes.KindTCP, Address: addr}))
				}
			}
			ps = append(ps, Planned{Target: group.target, Expected: expected, Tasks: tasks, Judge: byRule(RuleBlocked)})
		}
		return ps
	},
}
