package tests

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/fixtures"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// The documented stack with two live runs passes, from every vantage point.
func TestCorrectDeploymentPasses(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 2})
	r := audit(t, d.Project, closedPort(t))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code, "failing: %v", failing(r.report))
	assert.Equal(t, report.VerdictPass, r.report.Verdict)

	// Every active check ran from the fresh run and from both live runs.
	vantages := map[string]bool{}
	for _, c := range checksOf(r.report, d.Project, checks.EgressInternet) {
		vantages[c.Vantage] = true
		assert.Equal(t, report.Pass, c.Status)
	}
	assert.Equal(t, map[string]bool{"fresh-run": true, "run:" + d.Runs[0].RunID: true, "run:" + d.Runs[1].RunID: true}, vantages)
	for _, id := range []string{checks.NetworkAgentsExists, checks.NetworkAgentsInternal,
		checks.NetworkAgentsMembers, checks.RunNetworks, checks.ProxyPublished, checks.ProxyReachable,
		checks.DNSProxy, checks.DNSExternal, checks.EgressDNSDirect, checks.EgressHost,
		checks.EgressProxyForward} {
		s := statuses(r.report, d.Project, id)
		assert.NotZero(t, s[report.Pass], "%s: %v", id, s)
		assert.Zero(t, s[report.Fail]+s[report.Error]+s[report.Inconclusive], "%s: %v", id, s)
	}
	// Three canary queries, one per vantage, each a name of its own audit.
	canaries := 0
	for _, c := range checksOf(r.report, d.Project, checks.DNSExternal) {
		if strings.HasSuffix(c.Target, "(canary)") {
			canaries++
		}
	}
	assert.Equal(t, 3, canaries)
}

// Each fault of the catalogue is caught by the check that guards it, with
// exit status 1.
func TestMutantsFail(t *testing.T) {
	for _, tc := range []struct {
		mutant fixtures.Mutant
		check  string
		// vantage the failure must be seen from ("" = any)
		vantage string
		// every target of the check must fail from that vantage, not just one
		everyTarget bool
	}{
		{fixtures.NotInternal, checks.NetworkAgentsInternal, "host", false},
		{fixtures.NotInternal, checks.EgressInternet, "fresh-run", false},
		{fixtures.NotInternal, checks.DNSExternal, "fresh-run", false},
		{fixtures.NotInternal, checks.EgressDNSDirect, "fresh-run", false},
		{fixtures.RunOnDefault, checks.RunNetworks, "host", false},
		{fixtures.RunOnDefault, checks.EgressInternet, "run:", false},
		{fixtures.DBOnAgents, checks.NetworkAgentsMembers, "host", false},
		{fixtures.DualHomedDNS, checks.DNSExternal, "run:", false},
		{fixtures.ForwardingProxy, checks.EgressProxyForward, "fresh-run", true}, // CONNECT and absolute-URI GET
		{fixtures.ForeignMember, checks.NetworkAgentsMembers, "host", false},
		{fixtures.SharedProxy, checks.IsolationProjects, "fresh-run", false},
	} {
		t.Run(string(tc.mutant)+"/"+tc.check, func(t *testing.T) {
			t.Parallel()
			d := up(t, fixtures.Options{Runs: 1, Mutants: []fixtures.Mutant{tc.mutant}})
			r := audit(t, d.Project, closedPort(t), "--only", tc.check, "--only", checks.DNSProxy,
				"--only", checks.ProxyReachable)
			require.NotNil(t, r.report, r.stderr)
			assert.Equal(t, 1, r.code, "%v", failing(r.report))
			assertFails(t, r.report, d.Project, tc.check, tc.vantage)
			if tc.mutant == fixtures.DualHomedDNS {
				// The audit also asks the run's own --dns resolver directly,
				// whatever the engine's embedded DNS does with it.
				fwd := d.Extras[0].IPs[d.Agents.Name]
				require.NotEmpty(t, fwd)
				seen := false
				for _, c := range checksOf(r.report, d.Project, tc.check) {
					seen = seen || (c.Status == report.Fail && strings.Contains(c.Observed, "via "+fwd+":53/udp: address"))
				}
				assert.True(t, seen, "no dns.external failure through %s: %v", fwd, failing(r.report))
			}
			if tc.everyTarget {
				for _, c := range checksOf(r.report, d.Project, tc.check) {
					if c.Vantage == tc.vantage {
						assert.Equal(t, report.Fail, c.Status, c.Target)
					}
				}
			}
		})
	}
}

// A host service bound to 0.0.0.0 answers an agent through the gateway and
// the host's addresses, although the network is internal.
func TestHostServiceFails(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 1})
	port, stop, err := fixtures.StartHostService()
	require.NoError(t, err)
	defer stop()
	r := audit(t, d.Project, port, "--only", checks.EgressHost, "--only", checks.ProxyReachable)
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 1, r.code)
	assertFails(t, r.report, d.Project, checks.EgressHost, "fresh-run")
	assertFails(t, r.report, d.Project, checks.EgressHost, "run:")
	for _, c := range checksOf(r.report, d.Project, checks.EgressHost) {
		if c.Status == report.Fail {
			assert.Contains(t, c.Observed, "connected")
		}
	}
}

// A proxy published on all interfaces is a warning: exit 0, or 1 with --strict.
func TestPublishedProxyWarns(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Mutants: []fixtures.Mutant{fixtures.PublishedProxy}})
	r := audit(t, d.Project, closedPort(t), "--only", checks.ProxyPublished)
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code)
	assert.Equal(t, map[report.Status]int{report.Warn: 1}, statuses(r.report, d.Project, checks.ProxyPublished))
	r = audit(t, d.Project, closedPort(t), "--only", checks.ProxyPublished, "--strict")
	assert.Equal(t, 1, r.code)
}

// Without the positive control (the proxy gone from the agents network), a
// blocked check cannot pass: the audit is inconclusive, exit 3.
func TestLostControlIsInconclusive(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, api.NetworkDisconnect(ctx, d.Agents.ID, d.Proxy.ID, true))
	r := audit(t, d.Project, closedPort(t), "--only", checks.DNSProxy, "--only", checks.DNSExternal,
		"--only", checks.EgressInternet)
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 3, r.code, "%v", failing(r.report))
	assert.Equal(t, report.VerdictInconclusive, r.report.Verdict)
	assert.NotZero(t, statuses(r.report, d.Project, checks.DNSExternal)[report.Inconclusive])
	assert.Zero(t, statuses(r.report, d.Project, checks.DNSExternal)[report.Pass])
}

// A project whose stack is down fails network.agents.exists.
func TestMissingStackFails(t *testing.T) {
	t.Parallel()
	r := audit(t, "sbae2e-absent-"+randHex(3), closedPort(t))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 1, r.code)
	assertFails(t, r.report, r.report.Projects[0].Name, checks.NetworkAgentsExists, "host")
}

// Two correct projects side by side are isolated from each other, and
// --all-projects audits both.
func TestProjectsIsolated(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 1, SecondProject: true})
	r := audit(t, d.Project, closedPort(t), "--only", checks.IsolationProjects, "--only", checks.ProxyReachable)
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code, "%v", failing(r.report))
	targets := 0
	for _, c := range checksOf(r.report, d.Project, checks.IsolationProjects) {
		assert.Equal(t, report.Pass, c.Status, c.Target)
		if strings.Contains(c.Target, d.Second.Project) {
			targets++
		}
	}
	assert.NotZero(t, targets, "the second project's containers were probed")

	args := append([]string{"audit", "--format", "json", "--all-projects", "--only", checks.NetworkAgentsInternal}, worldArgs(closedPort(t))...)
	all := runTool(t, nil, args...)
	assert.Contains(t, all.stdout, `"name": "`+d.Project+`"`)
	assert.Contains(t, all.stdout, `"name": "`+d.Second.Project+`"`)
}

func assertFails(t *testing.T, r *report.Report, project, id, vantage string) {
	t.Helper()
	for _, c := range checksOf(r, project, id) {
		if c.Status == report.Fail && (vantage == "" || c.Vantage == vantage ||
			(vantage == "run:" && strings.HasPrefix(c.Vantage, "run:"))) {
			return
		}
	}
	t.Errorf("%s did not fail from %q; checks: %v", id, vantage, failing(r))
}

// Where the agents network has IPv6, IPv6 targets are probed too and the
// report says which families were: here a host service listening on IPv6
// only is reached through the network's IPv6 gateway.
func TestIPv6ProbedWhereEnabled(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 1, IPv6: true})
	l, err := net.Listen("tcp6", "[::]:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	r := audit(t, d.Project, port, "--only", checks.EgressHost, "--only", checks.ProxyReachable,
		"--only", checks.NetworkAgentsInternal)
	require.NotNil(t, r.report, r.stderr)
	require.Len(t, r.report.Projects, 1)
	assert.Equal(t, []string{"ipv4", "ipv6"}, r.report.Projects[0].AddressFamilies)
	v6reached := false
	for _, c := range checksOf(r.report, d.Project, checks.EgressHost) {
		if c.Status == report.Fail && strings.Contains(c.Observed, "]:"+strconv.Itoa(port)+": connected") {
			v6reached = true
		}
	}
	assert.True(t, v6reached, "an IPv6 address of the host was probed and reached: %v", failing(r.report))
	// Engines before 27 may not isolate IPv6 at all: said as a warning.
	assert.NotZero(t, statuses(r.report, d.Project, checks.NetworkAgentsInternal)[report.Warn])

	// An IPv4-only network: only ipv4 was probed.
	d4 := up(t, fixtures.Options{})
	r = audit(t, d4.Project, closedPort(t), "--only", checks.ProxyReachable)
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, []string{"ipv4"}, r.report.Projects[0].AddressFamilies)
}
