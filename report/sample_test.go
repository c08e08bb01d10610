package report

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestMain(m *testing.M) {
	// Width of "…" depends on the locale (East Asian ambiguous width);
	// goldens must not.
	twwidth.SetEastAsian(false)
	os.Exit(m.Run())
}

const longObserved = "connected in 3ms; GET / answered HTTP/1.1 200 OK, server: nginx/1.25.3, body 612 bytes, sha256 5f2b0c1e9a7d"

// sampleReport covers every status, two projects, a long observed value, a
// remedy override, an uncatalogued ID, hostile text and notes.
func sampleReport() *Report {
	r := &Report{
		Tool:       Tool{Name: "ssebench-audit", Version: "1.4.0"},
		Engine:     Engine{Version: "20.10.24", APIVersion: "1.41"},
		AuditID:    "a1b2c3",
		StartedAt:  time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC),
		DurationMS: 4321,
		Strict:     false,
		Notes: []string{
			"2 leftover audit probes found; run `ssebench-audit cleanup`",
			"live run r-77 exited during the audit",
		},
		Projects: []Project{
			{Name: "ssebench", AddressFamilies: []string{"ipv4", "ipv6"}, Checks: []Check{
				{ID: "network.agents.exists", Status: Pass, Vantage: "host", Target: "ssebench_agents",
					Expected: "exists", Observed: "exists (id 3f9a)", DurationMS: 2},
				{ID: "network.agents.internal", Status: Fail, Vantage: "host", Target: "ssebench_agents",
					Expected: "internal: true", Observed: "internal: false",
					Message: "the agents network has a route out", DurationMS: 1},
				{ID: "egress.internet", Status: Pass, Vantage: "fresh-run", Target: "198.51.100.2:80",
					Expected: "blocked", Observed: "connect: network is unreachable", DurationMS: 12},
				{ID: "egress.internet", Status: Fail, Vantage: "fresh-run", Target: "198.51.100.2:443",
					Expected: "blocked", Observed: longObserved,
					Message: "an internet target answered from the agents network", DurationMS: 15},
				{ID: "dns.proxy", Status: Pass, Vantage: "fresh-run", Target: "litellm",
					Expected: "an address", Observed: "172.18.0.2", DurationMS: 4},
				{ID: "dns.external", Status: Warn, Vantage: "run:r-1234", Target: "canary-a1b2c3.example.com",
					Expected: "no answer", Observed: "NXDOMAIN",
					Message: "the query reached a resolver", DurationMS: 30},
				{ID: "proxy.published", Status: Warn, Vantage: "host", Target: "ssebench-litellm-1",
					Expected: "127.0.0.1:4000", Observed: "0.0.0.0:4000",
					Message: "the proxy is reachable from the LAN",
					Remedy:  "Set LITELLM_BIND=127.0.0.1 in deploy/compose/.env and run `docker compose up -d litellm`.", DurationMS: 1},
				{ID: "daemon.reference-patch", Status: Error, Vantage: "run:r-1234", Target: "172.18.0.5:4263",
					Expected: "403", Observed: "read: connection reset by peer",
					Message: "the probe could not complete the request", DurationMS: 2003},
				{ID: "egress.host", Status: Inconclusive, Vantage: "fresh-run", Target: "172.18.0.1:22",
					Expected: "no answer", Observed: "timeout",
					Message: "positive control dns.proxy failed for this vantage", DurationMS: 3000},
				{ID: "socket.admin", Status: Skip, Vantage: "in-container:r-1234", Target: "/run/ssebench/admin.sock",
					Message: "no live run to copy the probe into"},
			}},
			{Name: "staging", Checks: []Check{
				{ID: "engine.version", Status: Pass, Vantage: "host", Target: "engine",
					Expected: "not affected by CVE-2024-29018", Observed: "20.10.24", DurationMS: 1},
				{ID: "run.hardening", Status: Fail, Vantage: "host", Target: "staging-run-9",
					Expected: "no privileges, no published ports",
					Observed: "privileged; label note=\x1b[31mhi|`x`\x1b[0m]]>",
					Message:  "a run container is privileged",
					Remedy:   "Remove `staging-run-9` (`docker rm -f staging-run-9`) and start it again through `ssebench run`.", DurationMS: 1},
				{ID: "socket.admin", Status: Skip, Vantage: "in-container:r-9", Target: "/run/ssebench/admin.sock",
					Message: "--skip socket.admin"},
				{ID: "lab.custom", Status: Pass, Vantage: "host", Target: "lab",
					Expected: "ok", Observed: "ok", DurationMS: 1},
			}},
		},
	}
	r.Finalize(false)
	return r
}

func strictReport() *Report {
	r := sampleReport()
	r.Strict = true
	r.Finalize(false)
	return r
}

func TestGolden(t *testing.T) {
	cases := []struct {
		file   string
		format string
		report *Report
	}{
		{"json.golden", "json", sampleReport()},
		{"table.golden", "table", sampleReport()},
		{"junit.golden", "junit", sampleReport()},
		{"junit-strict.golden", "junit", strictReport()},
		{"markdown.golden", "markdown", sampleReport()},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			got := render(t, tc.format, tc.report)
			path := filepath.Join("testdata", tc.file)
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run `go test ./report -update` to create it")
			require.Equal(t, string(want), got)
		})
	}
}

func render(t *testing.T, format string, r *Report) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, Render(&b, format, r, Options{Catalogue: testCatalogue}))
	return b.String()
}

// testCatalogue is the catalogue as the checks package had it when the
// golden files were written: test data, so these tests need no audit.
var testCatalogue = []Entry{
	{ID: "engine.version", From: "host", Title: "The Docker engine is not affected by CVE-2024-29018 (DNS forwarded from internal networks)",
		Remedy: "Upgrade the engine to 23.0.11, 25.0.5, 26.0.0 or later; until then make sure the host's resolver is not on loopback."},
	{ID: "network.agents.exists", From: "host", Title: "The agents network <project>_agents exists",
		Remedy: "Start the stack: `ssebench proxy up` (or `docker compose up -d` in deploy/compose)."},
	{ID: "network.agents.internal", From: "host", Title: "The agents network is internal (no route out)",
		Remedy: "Recreate the network with `internal: true` (docker compose down && docker compose up -d with the shipped compose file)."},
	{ID: "network.agents.members", From: "host", Title: "Only the proxy, the project's runs and audit probes are on the agents network",
		Remedy: "Disconnect the container: `docker network disconnect <project>_agents <container>`; keep databases and helpers on `default` only."},
	{ID: "run.networks", From: "host", Title: "Every restricted run is attached to the agents network and nothing else",
		Remedy: "Stop the run and start it again with `--egress restricted`; never `docker network connect` a run to another network."},
	{ID: "run.hardening", From: "host", Title: "No run is privileged, shares host namespaces, mounts the Docker socket, adds capabilities or publishes ports",
		Remedy: "Start runs only through `ssebench run`, with Docker's defaults."},
	{ID: "proxy.published", From: "host", Title: "The proxy's host port is bound to loopback",
		Remedy: "Set LITELLM_BIND=127.0.0.1 (the current compose file's default) and recreate the proxy."},
	{ID: "proxy.reachable", From: "fresh/live run", Title: "The proxy answers on its port from where the agent stands (positive control)",
		Remedy: "Start the proxy (`ssebench proxy up`); without it the audit cannot tell blocked from broken."},
	{ID: "dns.proxy", From: "fresh/live run", Title: "The proxy's name resolves from where the agent stands (positive control)",
		Remedy: "Check that the litellm service is on the agents network; without it the audit cannot tell blocked from broken."},
	{ID: "dns.external", From: "fresh/live run", Title: "Outside names and a unique canary name get no address",
		Remedy: "Keep runs on the internal network only, remove DNS forwarders reachable from it, and upgrade engines affected by CVE-2024-29018."},
	{ID: "egress.internet", From: "fresh/live run", Title: "No internet target can be reached over TCP",
		Remedy: "Make the agents network internal and attach runs to nothing else; check firewall rules (a firewalld reload drops Docker's, CVE-2025-54388)."},
	{ID: "egress.dns-direct", From: "fresh/live run", Title: "Outside resolvers cannot be queried directly (UDP and TCP)",
		Remedy: "Make the agents network internal and attach runs to nothing else."},
	{ID: "egress.host", From: "fresh/live run", Title: "No host service answers on the gateway or the host's addresses",
		Remedy: "Bind host services to 127.0.0.1, or drop traffic from the agents bridge to the host (iptables INPUT rule on the bridge; Docker 28: gateway_mode_ipv4=isolated)."},
	{ID: "egress.proxy-forward", From: "fresh/live run", Title: "The proxy refuses to forward (CONNECT, absolute-URI GET) to an internet target",
		Remedy: "Run the LiteLLM proxy image itself; never put a forwarding HTTP proxy on the agents network."},
	{ID: "isolation.projects", From: "fresh run", Title: "Containers of other Compose projects cannot be reached",
		Remedy: "Give every project its own networks (distinct COMPOSE_PROJECT_NAME) and connect no container to two projects."},
	{ID: "daemon.reference-patch", From: "fresh/live run", Title: "No run's daemon serves the reference patch on port 4263",
		Remedy: "Upgrade the run images to a daemon that serves /reference/patch on the admin socket only; remove kept containers of older versions."},
	{ID: "daemon.grading-gate", From: "fresh/live run", Title: "No run's daemon accepts grading requests on port 4263",
		Remedy: "Upgrade the run images to a daemon with the grading gate."},
	{ID: "daemon.public-view", From: "fresh/live run", Title: "No run's public project view carries reference material",
		Remedy: "Upgrade the run images; the public view must never include the reference patch or hidden tests."},
	{ID: "socket.admin", From: "in-container", Title: "The daemon's admin socket is root-only and out of the agent's reach",
		Remedy: "Upgrade the run images: the admin socket belongs at /run/ssebench/admin.sock, 0600, in a 0700 root directory."},
	{ID: "run.egress-recorded", From: "host (bench)", Title: "A finished run's summary.json records the egress policy the audit saw",
		Remedy: "Investigate the run: its recorded egress policy does not match its network."},
	{ID: "audit.probe", From: "fresh/live run", Title: "Every vantage point could be set up and probed",
		Remedy: "See the message: the probe container could not run; `ssebench-audit cleanup` removes leftovers."},
}
