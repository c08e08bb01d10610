package checks

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Config is one audit's settings; the CLI fills it from flags. How probes
// are made (the probe image, where it resolves) belongs to the backend.
type Config struct {
	Projects    []string
	AllProjects bool

	EgressTargets []string // host:port of internet targets
	ProxyTarget   string   // host:port the proxy is asked to forward to
	ExternalNames []string // names that must not resolve
	DNSServers    []string // outside resolvers that must not answer
	HostPorts     []int    // ports probed on the gateway and host addresses
	HostAddresses []string // replaces the host's discovered interface addresses

	// On a cluster, what egress.host probes besides the nodes' HostPorts:
	// cloud metadata and a node-local DNS cache (host:port each), and the
	// kubelet's ports on every node address.
	MetadataTargets []string
	NodeLocalDNS    []string
	KubeletPorts    []int

	Timeout time.Duration // per probe
	Retries int           // probing again what came out inconclusive

	Only, Skip []string
	Strict     bool

	// RunID narrows the audit to one live run of the (single) project: its
	// networks, hardening, own-namespace and in-container checks.
	RunID string
	// DeploymentOnly is a gate's audit: the host checks and the fresh run,
	// what a new run would meet; no live run is probed (each is audited in
	// flight, by its own audit).
	DeploymentOnly bool

	// LiveRunProbe is how a live run's network checks are made: LiveRunExec
	// (in the exec the in-container checks make anyway, the default) or
	// LiveRunContainer (a probe container joined to the run's namespace).
	LiveRunProbe string

	ToolVersion string
	Workers     int // vantage points probed at once
}

// The values of Config.LiveRunProbe.
const (
	LiveRunExec      = "exec"
	LiveRunContainer = "container"
)

// Built-in defaults: public endpoints, for audits of real hosts. Tests and the
// demo always pass their own.
var (
	// IPv6 entries are probed only where the agents network has IPv6.
	DefaultEgressTargets = []string{"1.1.1.1:443", "8.8.8.8:443", "9.9.9.9:443", "[2606:4700:4700::1111]:443", "[2001:4860:4860::8888]:443"}
	DefaultExternalNames = []string{"example.com", "github.com", "pypi.org", "api.openai.com"}
	DefaultProxyTarget   = "example.com:80"
	DefaultDNSServers    = []string{"1.1.1.1", "8.8.8.8", "9.9.9.9", "2606:4700:4700::1111", "2001:4860:4860::8888"}
	// Host services that turn into an agent's way out: SSH, DNS, HTTP and
	// SOCKS proxies, the Docker API, databases and caches, model servers.
	DefaultHostPorts = []int{22, 53, 80, 443, 1080, 2375, 2376, 3128, 3306, 5432, 6379, 8000, 8080, 8118, 8443, 8888, 9000, 11434, 27017}
	// The link-local metadata service of AWS, GCP, Azure and most clouds;
	// the address NodeLocal DNSCache listens on by default; the kubelet's
	// API and its read-only port.
	DefaultMetadataTargets = []string{"169.254.169.254:80"}
	DefaultNodeLocalDNS    = []string{"169.254.20.10:53"}
	DefaultKubeletPorts    = []int{10250, 10255}
)

const (
	DefaultTimeout = 3 * time.Second
	DefaultWorkers = 8
	MaxTimeout     = 5 * time.Minute
)

// projectName is what Compose accepts as a project name.
var projectName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// WithDefaults fills what was left unset (zero); a negative value stays,
// for Validate to reject.
func (c Config) WithDefaults() Config {
	// The proxy is asked to forward to the user's first internet target, or
	// to a plain-HTTP default (the default egress targets speak TLS).
	if c.ProxyTarget == "" && len(c.EgressTargets) > 0 {
		c.ProxyTarget = c.EgressTargets[0]
	}
	if c.ProxyTarget == "" {
		c.ProxyTarget = DefaultProxyTarget
	}
	if len(c.EgressTargets) == 0 {
		c.EgressTargets = DefaultEgressTargets
	}
	if len(c.ExternalNames) == 0 {
		c.ExternalNames = DefaultExternalNames
	}
	if len(c.DNSServers) == 0 {
		c.DNSServers = DefaultDNSServers
	}
	if len(c.HostPorts) == 0 {
		c.HostPorts = DefaultHostPorts
	}
	if len(c.MetadataTargets) == 0 {
		c.MetadataTargets = DefaultMetadataTargets
	}
	if len(c.NodeLocalDNS) == 0 {
		c.NodeLocalDNS = DefaultNodeLocalDNS
	}
	if len(c.KubeletPorts) == 0 {
		c.KubeletPorts = DefaultKubeletPorts
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.LiveRunProbe == "" {
		c.LiveRunProbe = LiveRunExec
	}
	return c
}

// Validate reports the first bad setting as a one-line error. The CLI
// calls it on the flags as given (whose defaults are set), so a zero
// timeout or worker count the user typed is rejected, not replaced.
func (c Config) Validate() error {
	if !c.AllProjects && len(c.Projects) == 0 {
		return fmt.Errorf("no project to audit")
	}
	for _, p := range c.Projects {
		if !projectName.MatchString(p) {
			return fmt.Errorf("invalid project name %q: Compose names are lowercase letters, digits, '-' and '_'", p)
		}
	}
	for _, t := range c.EgressTargets {
		if _, _, err := splitHostPort(t); err != nil {
			return fmt.Errorf("invalid --egress-target %q: %v", t, err)
		}
	}
	for flag, targets := range map[string][]string{"--metadata-target": c.MetadataTargets, "--node-local-dns": c.NodeLocalDNS} {
		for _, t := range targets {
			if _, _, err := splitHostPort(t); err != nil {
				return fmt.Errorf("invalid %s %q: %v", flag, t, err)
			}
		}
	}
	if c.ProxyTarget != "" {
		if _, _, err := splitHostPort(c.ProxyTarget); err != nil {
			return fmt.Errorf("invalid --proxy-target %q: %v", c.ProxyTarget, err)
		}
	}
	for _, s := range append(slices.Clone(c.DNSServers), c.HostAddresses...) {
		if net.ParseIP(s) == nil {
			return fmt.Errorf("invalid IP address %q", s)
		}
	}
	if c.LiveRunProbe != LiveRunExec && c.LiveRunProbe != LiveRunContainer {
		return fmt.Errorf("invalid --live-run-probe %q (want %s or %s)", c.LiveRunProbe, LiveRunExec, LiveRunContainer)
	}
	for flag, ports := range map[string][]int{"--host-port": c.HostPorts, "--kubelet-port": c.KubeletPorts} {
		for _, p := range ports {
			if p < 1 || p > 65535 {
				return fmt.Errorf("invalid %s %d", flag, p)
			}
		}
	}
	for _, n := range c.ExternalNames {
		if n == "" || len(n) > 253 {
			return fmt.Errorf("invalid --external-name %q", n)
		}
	}
	for _, id := range append(slices.Clone(c.Only), c.Skip...) {
		if !Known(id) {
			return fmt.Errorf("unknown check ID %q (`ssebench-audit checks` lists them)", id)
		}
	}
	if len(c.Wanted()) == 0 {
		return errors.New("no check left to run: --only and --skip exclude every check (`ssebench-audit checks` lists them)")
	}
	if c.Retries < 0 || c.Retries > 5 {
		return fmt.Errorf("--retries must be between 0 and 5")
	}
	if c.Timeout <= 0 || c.Timeout > MaxTimeout {
		return fmt.Errorf("--timeout must be more than 0 and at most %s, not %s", MaxTimeout, c.Timeout)
	}
	if c.Workers < 1 {
		return fmt.Errorf("--workers must be at least 1, not %d", c.Workers)
	}
	return nil
}

// Wants says whether check id is to be made under --only and --skip. The
// audit's report on itself (audit.probe) is kept unless skipped by name:
// --only must not hide that a vantage point could not be probed.
func (c Config) Wants(id string) bool {
	if slices.Contains(c.Skip, id) {
		return false
	}
	return len(c.Only) == 0 || slices.Contains(c.Only, id) || id == AuditProbe
}

// Wanted lists the deployment checks --only and --skip leave to run (the
// audit's report on itself aside).
func (c Config) Wanted() []string {
	var ids []string
	for _, ck := range registry {
		if ck.ID != AuditProbe && c.Wants(ck.ID) {
			ids = append(ids, ck.ID)
		}
	}
	return ids
}

// NetworkInExec says whether a live run's network plan is meant to ride on
// the exec the in-container checks make: only when one is wanted (no exec
// otherwise) and the user did not ask for joined probe containers.
func (c Config) NetworkInExec() bool {
	return c.LiveRunProbe == LiveRunExec && len(c.insideChecks()) > 0
}

// insideChecks are the wanted checks made from inside runs.
func (c Config) insideChecks() []*Check {
	var out []*Check
	for _, ck := range registry {
		if ck.Inside != nil && c.Wants(ck.ID) {
			out = append(out, ck)
		}
	}
	return out
}

// reachChecks are the wanted checks that follow up what is found inside
// runs with probes from other vantage points.
func (c Config) reachChecks() []*Check {
	var out []*Check
	for _, ck := range c.insideChecks() {
		if ck.Reach != nil {
			out = append(out, ck)
		}
	}
	return out
}

func splitHostPort(s string) (string, int, error) {
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	if h == "" {
		return "", 0, fmt.Errorf("empty host")
	}
	return h, n, nil
}
