// Package catalogue is the check catalogue of design.md: stable IDs, what
// each check proves, and what to do when it fails. Reports and the audit read
// it; CI configs and checklists refer to the IDs, so they never change.
package catalogue

// Entry describes one check.
type Entry struct {
	ID      string
	Vantage string // where it is checked from, as in design.md
	Title   string // the checklist item, phrased as the property that must hold
	Remedy  string // what to do when it fails or warns
}

// Check IDs.
const (
	EngineVersion         = "engine.version"
	NetworkAgentsExists   = "network.agents.exists"
	NetworkAgentsInternal = "network.agents.internal"
	NetworkAgentsMembers  = "network.agents.members"
	RunNetworks           = "run.networks"
	RunHardening          = "run.hardening"
	ProxyPublished        = "proxy.published"
	ProxyReachable        = "proxy.reachable"
	DNSProxy              = "dns.proxy"
	DNSExternal           = "dns.external"
	EgressInternet        = "egress.internet"
	EgressDNSDirect       = "egress.dns-direct"
	EgressHost            = "egress.host"
	EgressProxyForward    = "egress.proxy-forward"
	IsolationProjects     = "isolation.projects"
	DaemonReferencePatch  = "daemon.reference-patch"
	DaemonGradingGate     = "daemon.grading-gate"
	DaemonPublicView      = "daemon.public-view"
	SocketAdmin           = "socket.admin"
	RunEgressRecorded     = "run.egress-recorded"
	AuditProbe            = "audit.probe" // added: a vantage point could not be set up
)

// Entries in catalogue order (the order of design.md).
var Entries = []Entry{
	{EngineVersion, "host", "The Docker engine is not affected by CVE-2024-29018 (DNS forwarded from internal networks)",
		"Upgrade the engine to 23.0.11, 25.0.5, 26.0.0 or later; until then make sure the host's resolver is not on loopback."},
	{NetworkAgentsExists, "host", "The agents network <project>_agents exists",
		"Start the stack: `ssebench proxy up` (or `docker compose up -d` in deploy/compose)."},
	{NetworkAgentsInternal, "host", "The agents network is internal (no route out)",
		"Recreate the network with `internal: true` (docker compose down && docker compose up -d with the shipped compose file)."},
	{NetworkAgentsMembers, "host", "Only the proxy, the project's runs and audit probes are on the agents network",
		"Disconnect the container: `docker network disconnect <project>_agents <container>`; keep databases and helpers on `default` only."},
	{RunNetworks, "host", "Every restricted run is attached to the agents network and nothing else",
		"Stop the run and start it again with `--egress restricted`; never `docker network connect` a run to another network."},
	{RunHardening, "host", "No run is privileged, shares host namespaces, mounts the Docker socket, adds capabilities or publishes ports",
		"Start runs only through `ssebench run`, with Docker's defaults."},
	{ProxyPublished, "host", "The proxy's host port is bound to loopback",
		"Set LITELLM_BIND=127.0.0.1 (the current compose file's default) and recreate the proxy."},
	{ProxyReachable, "fresh/live run", "The proxy answers on its port from where the agent stands (positive control)",
		"Start the proxy (`ssebench proxy up`); without it the audit cannot tell blocked from broken."},
	{DNSProxy, "fresh/live run", "The proxy's name resolves from where the agent stands (positive control)",
		"Check that the litellm service is on the agents network; without it the audit cannot tell blocked from broken."},
	{DNSExternal, "fresh/live run", "Outside names and a unique canary name get no address",
		"Keep runs on the internal network only, remove DNS forwarders reachable from it, and upgrade engines affected by CVE-2024-29018."},
	{EgressInternet, "fresh/live run", "No internet target can be reached over TCP",
		"Make the agents network internal and attach runs to nothing else; check firewall rules (a firewalld reload drops Docker's, CVE-2025-54388)."},
	{EgressDNSDirect, "fresh/live run", "Outside resolvers cannot be queried directly (UDP and TCP)",
		"Make the agents network internal and attach runs to nothing else."},
	{EgressHost, "fresh/live run", "No host service answers on the gateway or the host's addresses",
		"Bind host services to 127.0.0.1, or drop traffic from the agents bridge to the host (iptables INPUT rule on the bridge; Docker 28: gateway_mode_ipv4=isolated)."},
	{EgressProxyForward, "fresh/live run", "The proxy refuses to forward (CONNECT, absolute-URI GET) to an internet target",
		"Run the LiteLLM proxy image itself; never put a forwarding HTTP proxy on the agents network."},
	{IsolationProjects, "fresh run", "Containers of other Compose projects cannot be reached",
		"Give every project its own networks (distinct COMPOSE_PROJECT_NAME) and connect no container to two projects."},
	{DaemonReferencePatch, "fresh/live run", "No run's daemon serves the reference patch on port 4263",
		"Upgrade the run images to a daemon that serves /reference/patch on the admin socket only; remove kept containers of older versions."},
	{DaemonGradingGate, "fresh/live run", "No run's daemon accepts grading requests on port 4263",
		"Upgrade the run images to a daemon with the grading gate."},
	{DaemonPublicView, "fresh/live run", "No run's public project view carries reference material",
		"Upgrade the run images; the public view must never include the reference patch or hidden tests."},
	{SocketAdmin, "in-container", "The daemon's admin socket is root-only and out of the agent's reach",
		"Upgrade the run images: the admin socket belongs at /run/ssebench/admin.sock, 0600, in a 0700 root directory."},
	{RunEgressRecorded, "host (bench)", "A finished run's summary.json records the egress policy the audit saw",
		"Investigate the run: its recorded egress policy does not match its network."},
	{AuditProbe, "fresh/live run", "Every vantage point could be set up and probed",
		"See the message: the probe container could not run; `ssebench-audit cleanup` removes leftovers."},
}

// Lookup returns the entry of an ID, and whether it exists.
func Lookup(id string) (Entry, bool) {
	for _, e := range Entries {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

// Known reports whether id is a catalogue ID.
func Known(id string) bool {
	_, ok := Lookup(id)
	return ok
}
