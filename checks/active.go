package checks

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// Probe is one planned active check on one target: the tasks the probe
// container runs for it and the rule that turns their results into a status.
type Probe struct {
	Check    string
	Target   string
	Expected string
	Rule     Rule
	// Control is the positive control whose failure makes a pass here
	// inconclusive; empty for the controls themselves.
	Control string
	Tasks   []probes.Task
}

// vantage is where a probe container stands.
type vantage struct {
	Name      string                     // "fresh-run" or "run:<id>"
	Run       *container.InspectResponse // the joined run, nil for fresh-run
	Gateways  []string                   // gateways of the networks it is on
	Resolvers []string                   // resolvers the run is configured with (--dns)
}

// activeInputs is what the plan of every vantage of one project shares.
type activeInputs struct {
	cfg           Config
	dep           *Deployment
	canary        string
	hostAddresses []string
}

// plan lists the probes of one vantage, filtered by --only/--skip.
func (in activeInputs) plan(v vantage) []Probe {
	cfg := in.cfg
	var ps []Probe
	add := func(p Probe) {
		if !cfg.Wanted(p.Check) {
			return
		}
		// IPv6 targets only where the agents network has IPv6: elsewhere
		// they are unreachable by construction and only cost time.
		var tasks []probes.Task
		for _, t := range p.Tasks {
			if t.Address == "" || familyOf(t.Address) == "ipv4" || in.dep.IPv6() {
				tasks = append(tasks, t)
			}
		}
		if len(tasks) > 0 {
			p.Tasks = tasks
			ps = append(ps, p)
		}
	}
	proxyIP := in.dep.ProxyIP()
	proxyAddr := net.JoinHostPort(proxyIP, strconv.Itoa(ProxyPort))

	// Positive controls.
	if proxyIP != "" {
		add(Probe{Check: catalogue.ProxyReachable, Target: ServiceProxy + " " + proxyAddr,
			Expected: "connects", Rule: RuleReached,
			Tasks: []probes.Task{{Kind: probes.KindTCP, Address: proxyAddr}}})
	}
	add(Probe{Check: catalogue.DNSProxy, Target: ServiceProxy, Expected: "resolves to an address",
		Rule: RuleResolves, Tasks: []probes.Task{{Kind: probes.KindDNS, Name: ServiceProxy}}})

	// Outside names through the container's resolver and any resolver the
	// run was configured with.
	resolvers := append([]string{""}, v.Resolvers...)
	for _, name := range append(append([]string{}, cfg.ExternalNames...), in.canary) {
		var tasks []probes.Task
		for _, r := range resolvers {
			addr := ""
			if r != "" {
				addr = net.JoinHostPort(r, "53")
			}
			tasks = append(tasks, probes.Task{Kind: probes.KindDNS, Name: name, Address: addr})
		}
		target := name
		if name == in.canary {
			target = name + " (canary)"
		}
		add(Probe{Check: catalogue.DNSExternal, Target: target, Control: catalogue.DNSProxy,
			Expected: "no address (SERVFAIL, REFUSED or timeout)", Rule: RuleNoAddress, Tasks: tasks})
	}

	for _, t := range cfg.EgressTargets {
		add(Probe{Check: catalogue.EgressInternet, Target: t, Control: catalogue.ProxyReachable,
			Expected: "no TCP connect", Rule: RuleBlocked,
			Tasks: []probes.Task{{Kind: probes.KindTCP, Address: t}}})
	}

	probeName := cfg.ExternalNames[0]
	for _, s := range cfg.DNSServers {
		addr := net.JoinHostPort(s, "53")
		add(Probe{Check: catalogue.EgressDNSDirect, Target: addr, Control: catalogue.ProxyReachable,
			Expected: "no answer over UDP or TCP", Rule: RuleNoAnswer,
			Tasks: []probes.Task{
				{Kind: probes.KindDNS, Name: probeName, Address: addr, Transport: "udp"},
				{Kind: probes.KindDNS, Name: probeName, Address: addr, Transport: "tcp"},
			}})
	}

	// One row for the gateways and one for the host's other addresses: the
	// evidence names every address and port that answered.
	gateways := uniq(v.Gateways)
	var others []string
	for _, a := range uniq(in.hostAddresses) {
		if !contains(gateways, a) {
			others = append(others, a)
		}
	}
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
			for _, port := range cfg.HostPorts {
				tasks = append(tasks, probes.Task{Kind: probes.KindTCP, Address: net.JoinHostPort(a, strconv.Itoa(port))})
			}
		}
		add(Probe{Check: catalogue.EgressHost, Target: group.target, Control: catalogue.ProxyReachable,
			Expected: fmt.Sprintf("no service answers on %d ports", len(cfg.HostPorts)), Rule: RuleBlocked, Tasks: tasks})
	}

	if proxyIP != "" {
		t := cfg.ProxyTarget
		add(Probe{Check: catalogue.EgressProxyForward, Target: "CONNECT " + t + " via " + proxyAddr,
			Control: catalogue.ProxyReachable, Expected: "not 2xx", Rule: RuleNoTunnel,
			Tasks: []probes.Task{{Kind: probes.KindHTTP, Address: proxyAddr, Method: "CONNECT", Target: t, Host: t}}})
		add(Probe{Check: catalogue.EgressProxyForward, Target: "GET http://" + t + "/ via " + proxyAddr,
			Control: catalogue.ProxyReachable, Expected: "answered like a local request", Rule: RuleNoForward,
			Tasks: []probes.Task{
				{Kind: probes.KindHTTP, Address: proxyAddr, Method: "GET", Target: "/", Host: t},
				{Kind: probes.KindHTTP, Address: proxyAddr, Method: "GET", Target: "http://" + t + "/", Host: t},
			}})
	}

	for _, p := range daemonProbes(in.dep, v, cfg.Timeout) {
		add(p)
	}

	if v.Run == nil {
		for _, o := range in.dep.Others {
			var tasks []probes.Task
			for _, addr := range containerAddrs(o) {
				tasks = append(tasks, probes.Task{Kind: probes.KindTCP, Address: addr})
			}
			if len(tasks) == 0 {
				continue
			}
			label := ContainerName(o)
			if p := o.Config.Labels[LabelComposeProject]; p != "" {
				label += " (project " + p + ")"
			}
			add(Probe{Check: catalogue.IsolationProjects, Target: label, Control: catalogue.ProxyReachable,
				Expected: "not reachable", Rule: RuleBlocked, Tasks: tasks})
		}
	}
	return ps
}

// containerAddrs lists ip:port for every address and known port of a
// container: its exposed ports and the ports ssebench's services listen on.
func containerAddrs(c container.InspectResponse) []string {
	ports := map[int]bool{}
	if c.Config != nil {
		for p := range c.Config.ExposedPorts {
			if p.Proto() == "tcp" {
				ports[p.Int()] = true
			}
		}
		switch {
		case c.Config.Labels[LabelComposeService] == ServiceProxy:
			ports[ProxyPort] = true
		case c.Config.Labels[LabelComposeService] == ServiceDB:
			ports[DBPort] = true
		case IsRun(c.Config.Labels):
			ports[DaemonPort] = true
		}
	}
	var out []string
	if c.NetworkSettings == nil {
		return nil
	}
	var ips []string
	for _, ep := range c.NetworkSettings.Networks {
		if ep != nil && ep.IPAddress != "" {
			ips = append(ips, ep.IPAddress)
		}
	}
	sort.Strings(ips)
	var ps []int
	for p := range ports {
		ps = append(ps, p)
	}
	sort.Ints(ps)
	for _, ip := range uniq(ips) {
		for _, p := range ps {
			out = append(out, net.JoinHostPort(ip, strconv.Itoa(p)))
		}
	}
	return out
}

// freshVantage is a probe created like a restricted run: on the agents
// network only.
func freshVantage(d *Deployment) vantage {
	v := vantage{Name: "fresh-run"}
	for _, c := range d.Agents.IPAM.Config {
		gw := c.Gateway
		if gw == "" && strings.Contains(c.Subnet, ":") {
			gw = firstHost(c.Subnet) // Docker's default IPv6 gateway
		}
		if gw != "" && (!strings.Contains(gw, ":") || d.IPv6()) {
			v.Gateways = append(v.Gateways, gw)
		}
	}
	return v
}

// firstHost is the first address of a subnet ("fd00::/64" -> "fd00::1").
func firstHost(subnet string) string {
	_, n, err := net.ParseCIDR(subnet)
	if err != nil {
		return ""
	}
	ip := append(net.IP(nil), n.IP...)
	ip[len(ip)-1]++
	return ip.String()
}

// familyOf says "ipv6" for an IPv6 address or host:port, else "ipv4".
func familyOf(addr string) string {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return "ipv6"
	}
	return "ipv4"
}

// runVantage stands in a live run's own network namespace.
func runVantage(r container.InspectResponse) vantage {
	v := vantage{Name: "run:" + RunName(r), Run: &r}
	if r.NetworkSettings != nil {
		for _, ep := range r.NetworkSettings.Networks {
			if ep != nil && ep.Gateway != "" {
				v.Gateways = append(v.Gateways, ep.Gateway)
			}
			if ep != nil && ep.IPv6Gateway != "" {
				v.Gateways = append(v.Gateways, ep.IPv6Gateway)
			}
		}
	}
	sort.Strings(v.Gateways)
	if r.HostConfig != nil {
		for _, s := range r.HostConfig.DNS {
			if net.ParseIP(s) != nil {
				v.Resolvers = append(v.Resolvers, s)
			}
		}
	}
	return v
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
