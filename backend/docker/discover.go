package docker

import (
	"context"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

// Projects lists the Compose projects that have an agents network.
func (b *Backend) Projects(ctx context.Context) ([]string, error) {
	nets, err := b.api.NetworkList(ctx, network.ListOptions{})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, n := range nets {
		p := n.Labels[LabelComposeProject]
		if p != "" && (n.Labels[LabelComposeNetwork] == "agents" || n.Name == checks.AgentsName(p)) {
			seen[p] = true
		}
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// Discover finds the project's networks, proxy, database, runs and the
// containers of other projects.
func (b *Backend) Discover(ctx context.Context, project string) (*checks.Deployment, error) {
	d := &checks.Deployment{Backend: b.Name(), Project: project}
	var agents, def *network.Inspect
	nets, err := b.api.NetworkList(ctx, network.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	for _, n := range nets {
		var slot **network.Inspect
		switch {
		case isProjectNetwork(n, project, "agents"):
			slot = &agents
		case isProjectNetwork(n, project, "default"):
			slot = &def
		default:
			continue
		}
		ni, err := b.api.NetworkInspect(ctx, n.ID, network.InspectOptions{})
		if cerrdefs.IsNotFound(err) {
			continue // removed between list and inspect
		} else if err != nil {
			return nil, fmt.Errorf("inspecting network %s: %w", n.Name, err)
		}
		*slot = &ni
	}

	list, err := b.api.ContainerList(ctx, container.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	projectNets := map[string]bool{}
	for _, n := range []*network.Inspect{agents, def} {
		if n != nil {
			projectNets[n.Name] = true
		}
	}
	listed := map[string]container.Summary{}
	for _, c := range list {
		listed[c.ID] = c
		if c.Labels[LabelProbe] != "" {
			continue // audit probes, ours or a concurrent audit's
		}
		cp := c.Labels[LabelComposeProject]
		isRun := isRunLabels(c.Labels)
		onProject := false
		if c.NetworkSettings != nil {
			for name := range c.NetworkSettings.Networks {
				onProject = onProject || projectNets[name]
			}
		}
		mine := cp == project || (isRun && onProject)
		if !mine && cp == "" && !isRun {
			continue // not a Compose or ssebench container: not ours to touch
		}
		ci, err := b.api.ContainerInspect(ctx, c.ID)
		if cerrdefs.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("inspecting container %s: %w", shortID(c.ID), err)
		}
		cc := toContainer(ci)
		switch {
		case !mine:
			d.Others = append(d.Others, cc)
		case isRun:
			d.Runs = append(d.Runs, cc)
		case cc.Service == checks.ServiceProxy:
			d.Proxy = &cc
		}
	}
	if agents != nil {
		if d.Agents, err = b.toNetwork(ctx, *agents, listed); err != nil {
			return nil, err
		}
	}
	if def != nil {
		if d.Default, err = b.toNetwork(ctx, *def, listed); err != nil {
			return nil, err
		}
	}
	sort.Slice(d.Runs, func(i, j int) bool { return d.Runs[i].RunName() < d.Runs[j].RunName() })
	d.HostAddresses = hostAddresses(d.IPv6())
	return d, nil
}

// toNetwork describes a network and its members. An endpoint whose
// container the list did not show is looked up: a container is on the
// network while it starts, before it lists as running (a run being
// started, a concurrent audit's probe). One gone by now is no member.
func (b *Backend) toNetwork(ctx context.Context, n network.Inspect, listed map[string]container.Summary) (*checks.Network, error) {
	out := &checks.Network{Name: n.Name, ID: n.ID, Internal: n.Internal, IPv6: n.EnableIPv6}
	for _, c := range n.IPAM.Config {
		gw := c.Gateway
		if gw == "" && strings.Contains(c.Subnet, ":") {
			gw = firstHost(c.Subnet) // Docker's default IPv6 gateway
		}
		if gw != "" && (!strings.Contains(gw, ":") || n.EnableIPv6) {
			out.Gateways = append(out.Gateways, gw)
		}
	}
	ids := make([]string, 0, len(n.Containers))
	for id := range n.Containers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		ep := n.Containers[id]
		labels, known := listed[id].Labels, false
		if _, ok := listed[id]; ok {
			known = true
		} else {
			ci, err := b.api.ContainerInspect(ctx, id)
			switch {
			case cerrdefs.IsNotFound(err):
				continue
			case err != nil:
				return nil, fmt.Errorf("inspecting container %s: %w", shortID(id), err)
			}
			known = true
			if ci.Config != nil {
				labels = ci.Config.Labels
			}
		}
		out.Members = append(out.Members, checks.Member{ID: id, Name: ep.Name, Address: strings.Split(ep.IPv4Address, "/")[0],
			Known: known, Probe: labels[LabelProbe] != "", Run: isRunLabels(labels),
			Project: labels[LabelComposeProject], Service: labels[LabelComposeService]})
	}
	return out, nil
}

func isProjectNetwork(n network.Summary, project, role string) bool {
	if n.Labels[LabelComposeProject] == project && n.Labels[LabelComposeNetwork] == role {
		return true
	}
	// Stacks made without Compose labels still follow its naming.
	return n.Name == project+"_"+role && n.Labels[LabelComposeProject] == ""
}

// isRunLabels says whether labels mark an ssebench run container (the
// daemon's container, or either container of a sidecar pair).
func isRunLabels(labels map[string]string) bool {
	return labels[LabelRunID] != "" || labels[LabelRun] != "" || labels[LabelWebUI] == "true"
}

// toContainer describes a container as the checks judge it.
func toContainer(ci container.InspectResponse) checks.Container {
	c := checks.Container{Name: strings.TrimPrefix(ci.Name, "/")}
	if ci.ContainerJSONBase != nil {
		c.ID = ci.ID
		c.Running = ci.State != nil && ci.State.Running
	}
	if cfg := ci.Config; cfg != nil {
		l := cfg.Labels
		c.RunID, c.Pair, c.TaskID, c.WebUI, c.ResultsDir = l[LabelRunID], l[LabelRun], l[LabelTaskID], l[LabelWebUI] == "true", l[LabelResults]
		c.Project, c.Service = l[LabelComposeProject], l[LabelComposeService]
		c.Env = cfg.Env
		for p := range cfg.ExposedPorts {
			if p.Proto() == "tcp" {
				c.ExposedTCP = append(c.ExposedTCP, p.Int())
			}
		}
		sort.Ints(c.ExposedTCP)
	}
	if ns := ci.NetworkSettings; ns != nil {
		c.Networks = map[string]checks.Endpoint{}
		for name, ep := range ns.Networks {
			if ep != nil {
				c.Networks[name] = checks.Endpoint{IPv4: ep.IPAddress, IPv6: ep.GlobalIPv6Address,
					Gateway: ep.Gateway, IPv6Gateway: ep.IPv6Gateway}
			}
		}
		for port, bs := range ns.Ports {
			for _, b := range bs {
				c.Published = append(c.Published, checks.Binding{HostIP: b.HostIP, HostPort: b.HostPort, Port: string(port)})
			}
		}
		sort.Slice(c.Published, func(i, j int) bool { return c.Published[i].String() < c.Published[j].String() })
	}
	if h := ci.HostConfig; h != nil {
		c.HostNetwork = h.NetworkMode.IsHost()
		c.DNS = h.DNS
		hd := &checks.Hardening{Privileged: h.Privileged, CapAdd: h.CapAdd, SecurityOpt: h.SecurityOpt, Devices: len(h.Devices)}
		// (The cgroup namespace is not judged: "host" is Docker's default on
		// cgroup v1 hosts.)
		for _, ns := range []struct{ name, mode string }{{"network", string(h.NetworkMode)}, {"PID", string(h.PidMode)},
			{"IPC", string(h.IpcMode)}, {"UTS", string(h.UTSMode)}, {"user", string(h.UsernsMode)}} {
			if ns.mode == "host" {
				hd.HostNamespaces = append(hd.HostNamespaces, ns.name)
			}
		}
		for _, m := range ci.Mounts {
			hd.Mounts = append(hd.Mounts, checks.Mount{Bind: m.Type == mount.TypeBind, Source: m.Source, Destination: m.Destination, RW: m.RW})
		}
		c.Hardening = hd
	}
	return c
}

// hostAddresses are this machine's interface addresses, when the engine is
// local (a remote engine's addresses cannot be read from here): what an
// agent might reach besides the gateway.
func hostAddresses(ipv6 bool) []string {
	if h := os.Getenv("DOCKER_HOST"); h != "" && !strings.HasPrefix(h, "unix://") {
		return nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() || (ipn.IP.To4() == nil && !ipv6) {
			continue
		}
		out = append(out, ipn.IP.String())
	}
	return out
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

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
