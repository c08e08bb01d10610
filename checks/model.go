package checks

import (
	"net"
	"sort"
	"strings"
)

// Engine is the container engine (or cluster) an audit ran against.
type Engine struct {
	Version    string
	APIVersion string
}

// Deployment is what a backend found of one ssebench deployment (one Compose
// project on Docker), in terms the checks judge without knowing the backend.
type Deployment struct {
	Backend string // BackendDocker or BackendKubernetes: which checks apply
	// Cluster is what a Kubernetes backend found; nil on Docker.
	Cluster *Cluster
	// ProxyAddress is host:port where a run reaches the proxy, and
	// ProxyName the name it resolves, when the backend knows them other
	// than by a network (a cluster's Service).
	ProxyAddress string
	ProxyName    string
	Project      string
	Engine       Engine
	Agents       *Network // <project>_agents; nil when it does not exist
	Default      *Network // <project>_default; nil when it does not exist
	Proxy        *Container
	Runs         []Container // run containers of the project, sorted by RunName
	// Others are containers of other projects (and their runs): the
	// targets of isolation.projects.
	Others []Container
	// HostAddresses are the host's own addresses where the backend can read
	// them (a local engine); nil otherwise.
	HostAddresses []string
}

// Network is one network of a deployment.
type Network struct {
	Name     string
	ID       string
	Internal bool
	IPv6     bool
	// Gateways are the gateway addresses a container attached to this
	// network sees (the IPv6 one only when IPv6 is on).
	Gateways []string
	Members  []Member // every endpoint on it, sorted by ID
}

// Member is one endpoint on a network, labelled by what the backend could
// tell of the container behind it.
type Member struct {
	ID      string
	Name    string
	Address string // IPv4 address on the network, without prefix length
	Known   bool   // the backend could look the container up
	Probe   bool   // an audit's own probe (this audit's or a concurrent one's)
	Run     bool   // an ssebench run container
	Project string // the Compose project it belongs to, "" for none
	Service string // its Compose service
}

// Container is one container of a deployment: a run, the proxy, the
// database, or another project's.
type Container struct {
	ID      string
	Name    string // without Docker's leading slash
	Running bool

	// ssebench's labels
	RunID      string // ssebench.run-id
	Pair       string // ssebench.run: the pair ID of a sidecar-mode run
	TaskID     string // ssebench.task-id
	WebUI      bool   // ssebench.webui=true
	ResultsDir string // ssebench.results: the one host directory a run may write

	// Compose's labels
	Project string
	Service string

	Networks    map[string]Endpoint // by network name
	HostNetwork bool                // shares the host's network namespace
	DNS         []string            // resolvers it was started with (--dns)
	ExposedTCP  []int               // TCP ports its image or config exposes
	Published   []Binding           // ports published on the host
	Env         []string            // KEY=value, as the container was started
	// Hardening is how the container was started; nil when the backend
	// could not tell.
	Hardening *Hardening
}

// Endpoint is a container's attachment to one network.
type Endpoint struct {
	IPv4, IPv6           string
	Gateway, IPv6Gateway string
}

// Binding is one published port.
type Binding struct {
	HostIP, HostPort string
	Port             string // the container's port, "4000/tcp"
}

func (b Binding) String() string { return b.HostIP + ":" + b.HostPort + "->" + b.Port }

// Hardening is what decides how much power a container has over its host.
type Hardening struct {
	Privileged     bool
	HostNamespaces []string // namespaces shared with the host: "network", "PID", "IPC", "UTS", "user"
	CapAdd         []string
	Mounts         []Mount
	SecurityOpt    []string
	Devices        int
}

// Mount is one mount of a container.
type Mount struct {
	Bind        bool // a bind mount of a host path (else a volume or tmpfs)
	Source      string
	Destination string
	RW          bool
}

// IsRun says whether a container is an ssebench run container: the
// daemon's container, or either container of a sidecar pair.
func (c Container) IsRun() bool { return c.RunID != "" || c.Pair != "" || c.WebUI }

// HoldsDaemon says whether a run container runs the daemon on 4263 (a
// sidecar pair's agent container holds none).
func (c Container) HoldsDaemon() bool { return c.RunID != "" || c.WebUI }

// RunName names a run container in reports: its run ID, else its pair ID
// and name, else its name.
func (c Container) RunName() string {
	switch {
	case c.RunID != "":
		return c.RunID
	case c.Pair != "":
		return c.Pair + "/" + c.Name
	}
	return c.Name
}

// NetworkNames lists the networks a container is attached to, sorted.
func (c Container) NetworkNames() []string {
	nets := make([]string, 0, len(c.Networks))
	for n := range c.Networks {
		nets = append(nets, n)
	}
	sort.Strings(nets)
	return nets
}

// IPs lists the container's addresses on every network, sorted, once each.
func (c Container) IPs() []string {
	var ips []string
	for _, ep := range c.Networks {
		ips = append(ips, ep.IPv4)
	}
	sort.Strings(ips)
	return uniq(ips)
}

// EnvValue is the value of one variable of the container's environment.
func (c Container) EnvValue(key string) (string, bool) {
	for _, e := range c.Env {
		if v, ok := strings.CutPrefix(e, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Restricted says whether a run is on the agents network (a restricted
// run); open runs are on default only and expected to reach out.
func (d *Deployment) Restricted(c Container) bool {
	if d.Cluster != nil { // a run pod whose own policy is not ssebench's open one
		for _, p := range d.Cluster.RunPods {
			if p.Name == c.Name {
				return !isOpenRun(d.Cluster, p)
			}
		}
		return false
	}
	if d.Agents == nil {
		return false
	}
	_, ok := c.Networks[d.Agents.Name]
	return ok
}

// IPv6 says whether the agents network has IPv6 enabled.
func (d *Deployment) IPv6() bool { return d.Agents != nil && d.Agents.IPv6 }

// Families are the address families the audit probes on this deployment.
func (d *Deployment) Families() []string {
	if d.IPv6() {
		return []string{"ipv4", "ipv6"}
	}
	return []string{"ipv4"}
}

// Probeable says whether probes can stand where the deployment's runs
// stand: on its agents network, or (a cluster) in the runs' namespace.
func (d *Deployment) Probeable() bool { return d.Agents != nil || d.Cluster != nil }

// RunAddress is where other runs reach run r (IPv4): its address on the
// agents network, or on a cluster its pod's; "" when it has none.
func (d *Deployment) RunAddress(r Container) string {
	if d.Cluster != nil {
		for _, p := range d.Cluster.RunPods {
			if p.Name == r.Name {
				for _, ip := range p.IPs {
					if net.ParseIP(ip).To4() != nil {
						return ip
					}
				}
			}
		}
		return ""
	}
	if d.Agents == nil {
		return ""
	}
	return r.Networks[d.Agents.Name].IPv4
}

// ProxyIP is the proxy's address on the agents network, "" when unknown.
func (d *Deployment) ProxyIP() string {
	if d.Proxy == nil || d.Agents == nil {
		return ""
	}
	return d.Proxy.Networks[d.Agents.Name].IPv4
}

// LiveRuns are the runs that are running.
func (d *Deployment) LiveRuns() []Container {
	var out []Container
	for _, r := range d.Runs {
		if r.Running {
			out = append(out, r)
		}
	}
	return out
}

// RunsByID returns the run containers of one run ID: one in sandbox mode,
// both of a sidecar pair (found by its pair label) in sidecar mode.
func (d *Deployment) RunsByID(runID string) []Container {
	pair := ""
	for _, r := range d.Runs {
		if r.RunID == runID {
			pair = r.Pair
		}
	}
	var out []Container
	for _, r := range d.Runs {
		if r.RunID == runID || (pair != "" && r.Pair == pair) {
			out = append(out, r)
		}
	}
	return out
}

// AgentsName is the agents network's name under Compose's naming.
func AgentsName(project string) string { return project + "_agents" }

// DefaultName is the default network's name under Compose's naming.
func DefaultName(project string) string { return project + "_default" }

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
