package tests

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/fixtures"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// Two audits of one project at once: neither takes the other's probes for
// intruders, neither removes the other's probes, and both clean up.
//
// Round "together" starts both in the same instant. Round "overlapping"
// starts a long audit (10 s probes), and a short one as soon as the long
// one's fresh-run probe is on the agents network: the short audit's
// network.agents.members check is sure to meet the other audit's probe, and
// its final sweep runs while the long audit's probes are still at work.
func TestConcurrentAuditsOfOneProject(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 2})
	sweepProbesAtEnd(t, d.Project)
	args := append([]string{"audit", "--format", "json", "--project", d.Project}, worldArgs(closedPort(t))...)

	for _, round := range []string{"together", "overlapping"} {
		var a, b *toolProc // a ends first in "overlapping"
		var ra, rb result
		if round == "together" {
			a, b = startTool(t, nil, append(args, "--timeout", "2s")...), startTool(t, nil, append(args, "--timeout", "2s")...)
			ra, rb = a.wait(t), b.wait(t)
		} else {
			b = startTool(t, nil, append(args, "--timeout", "10s")...)
			require.True(t, waitUntil(b, 60*time.Second, func() bool { return probesOnAgents(t, d) > 0 }),
				"%s: the long audit's fresh-run probe never joined %s", round, d.Agents.Name)
			a = startTool(t, nil, append(args, "--timeout", "1s")...)
			ra = a.wait(t)
			select {
			case <-b.done:
				t.Errorf("%s: the long audit ended before the short one: the overlap this round needs did not happen", round)
			default:
			}
			rb = b.wait(t)
		}
		for i, r := range []result{ra, rb} {
			require.NotNil(t, r.report, "%s: audit %d: exit %d, stderr %s", round, i, r.code, r.stderr)
			assert.Equal(t, 0, r.code, "%s: audit %d: %v", round, i, failing(r.report))
			assert.Equal(t, report.VerdictPass, r.report.Verdict, "%s: audit %d", round, i)
			ms := checksOf(r.report, d.Project, checks.NetworkAgentsMembers)
			require.NotEmpty(t, ms, "%s: audit %d has no members check", round, i)
			for _, c := range ms {
				assert.Equal(t, report.Pass, c.Status, "%s: audit %d: members: %s %s: %s", round, i, c.Target, c.Observed, c.Message)
			}
		}
		t.Logf("%s: audit %s %s+%dms, audit %s %s+%dms", round, ra.report.AuditID, ra.report.StartedAt.Format("15:04:05.000"),
			ra.report.DurationMS, rb.report.AuditID, rb.report.StartedAt.Format("15:04:05.000"), rb.report.DurationMS)
		assert.NotEqual(t, ra.report.AuditID, rb.report.AuditID, "%s: two audits, two IDs", round)
		// They really ran at the same time.
		endA := ra.report.StartedAt.Add(time.Duration(ra.report.DurationMS) * time.Millisecond)
		endB := rb.report.StartedAt.Add(time.Duration(rb.report.DurationMS) * time.Millisecond)
		assert.True(t, ra.report.StartedAt.Before(endB) && rb.report.StartedAt.Before(endA),
			"%s: the audits did not overlap: %s+%dms, %s+%dms", round,
			ra.report.StartedAt, ra.report.DurationMS, rb.report.StartedAt, rb.report.DurationMS)
		if round == "overlapping" {
			// The short audit met the long one's probe and let it be.
			seen := false
			for _, c := range checksOf(ra.report, d.Project, checks.NetworkAgentsMembers) {
				seen = seen || regexp.MustCompile(`\b[1-9][0-9]* audit probes`).MatchString(c.Observed)
			}
			assert.True(t, seen, "%s: the short audit saw no probe of the long one: %v",
				round, checksOf(ra.report, d.Project, checks.NetworkAgentsMembers))
		}
		assert.Zero(t, probesOf(t, d.Project), "%s: probe containers left behind", round)
	}
}

// The engine goes away in the middle of an audit (its socket, through a
// proxy the test kills): the audit ends with exit 2, says what it did not
// check, prints no stack trace, and `cleanup` against the real socket
// removes whatever probes it could no longer remove itself.
func TestEngineGoesAway(t *testing.T) {
	t.Parallel()
	host := api.DaemonHost()
	engineSock, ok := strings.CutPrefix(host, "unix://")
	if !ok {
		t.Skipf("the engine is not on a Unix socket (%s)", host)
	}
	d := up(t, fixtures.Options{Runs: 2})
	sweepProbesAtEnd(t, d.Project)
	// The probe image first, through the real socket: the engine should go
	// away while the audit probes, not while it builds.
	bi := runTool(t, nil, "probe-image", "build")
	require.Equal(t, 0, bi.code, bi.stderr)

	sock := filepath.Join(t.TempDir(), "docker.sock")
	px := startSocketProxy(t, sock, engineSock)
	args := append([]string{"audit", "--format", "json", "--project", d.Project}, worldArgs(closedPort(t))...)
	p := startTool(t, []string{"DOCKER_HOST=unix://" + sock}, append(args, "--timeout", "2s")...)
	time.Sleep(1200 * time.Millisecond)
	select {
	case <-p.done:
		t.Fatalf("the audit ended before the engine went away: exit %d\n%s\n%s", p.res.code, p.res.stdout, p.res.stderr)
	default:
	}
	px.kill()
	left := probesOf(t, d.Project) // what exists when the engine goes away
	r := p.wait(t)
	t.Logf("engine gone after 1.2s: %d connections proxied, %d probes existed, exit %d, stderr %q",
		px.accepted.Load(), left, r.code, r.stderr)
	require.NotZero(t, px.accepted.Load(), "the audit never used the proxied socket")

	assert.Equal(t, 2, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.NotContains(t, r.stderr, "goroutine", "a stack trace")
	assert.NotContains(t, r.stderr, "panic")
	if r.report != nil {
		// A partial report: it must say what it could not check.
		assert.Equal(t, report.VerdictError, r.report.Verdict)
		assert.NotZero(t, r.report.Summary.Error, "no check is an error: %v", failing(r.report))
		assert.NotEmpty(t, r.report.Notes, "the report does not say the audit was cut short")
	} else {
		assert.Empty(t, r.stdout)
		assert.Equal(t, 1, strings.Count(strings.TrimRight(r.stderr, "\n"), "\n")+1, "one line: %q", r.stderr)
		assert.Contains(t, r.stderr, "ssebench-audit: ")
	}

	// The engine is back (the real socket): cleanup sweeps what is left.
	c := runTool(t, nil, "cleanup", "--project", d.Project)
	assert.Equal(t, 0, c.code, c.stderr)
	assert.Contains(t, c.stdout, "removed")
	t.Logf("cleanup: %s", strings.TrimSpace(c.stdout))
	assert.Zero(t, probesOf(t, d.Project), "probes left after cleanup")
}

// The probe image moves between hosts: build prints its content-hash
// reference, save writes a docker-save tarball of it, load takes it back,
// and an audit uses it by reference.
func TestProbeImageSaveLoad(t *testing.T) {
	t.Parallel()
	b := runTool(t, nil, "probe-image", "build")
	require.Equal(t, 0, b.code, b.stderr)
	ref := strings.TrimSpace(b.stdout)
	require.Regexp(t, `^ssebench-audit-probe:[0-9a-f]{16}$`, ref)

	dir := t.TempDir()
	file := filepath.Join(dir, "probe.tar")
	s := runTool(t, nil, "probe-image", "save", file)
	require.Equal(t, 0, s.code, s.stderr)
	assert.Equal(t, ref, strings.TrimSpace(s.stdout))
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.NotZero(t, st.Size())
	_, err = os.Stat(file + ".partial")
	assert.True(t, errors.Is(err, os.ErrNotExist), "the partial file is left: %v", err)

	// A docker-save tarball whose manifest names the image.
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	tr := tar.NewReader(f)
	var manifest []struct{ RepoTags []string }
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if h.Name == "manifest.json" {
			require.NoError(t, json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&manifest))
		}
	}
	require.Len(t, manifest, 1, "manifest.json")
	assert.Equal(t, []string{ref}, manifest[0].RepoTags)

	// Other tests use the image, so it stays: load it over itself.
	l := runTool(t, nil, "probe-image", "load", file)
	require.Equal(t, 0, l.code, l.stderr)
	assert.Contains(t, l.stdout, "Loaded image")
	assert.Contains(t, l.stdout, ref)

	// A tarball that is not one (cut short in transfer, say) loads nothing:
	// that is an error, not a success.
	t.Run("corrupt tarball", func(t *testing.T) {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		cut := filepath.Join(dir, "cut.tar")
		require.NoError(t, os.WriteFile(cut, b[:len(b)/3], 0o644))
		l := runTool(t, nil, "probe-image", "load", cut)
		assert.Equal(t, 2, l.code, "stdout %q, stderr %q", l.stdout, l.stderr)
		assert.NotContains(t, l.stdout, "Loaded image")
		assert.NotContains(t, l.stderr, "goroutine")
	})

	d := up(t, fixtures.Options{Runs: 1})
	r := audit(t, d.Project, closedPort(t), "--probe-image", ref, "--only", checks.DNSProxy)
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code, "%v", failing(r.report))
	s2 := statuses(r.report, d.Project, checks.DNSProxy)
	assert.Equal(t, 2, s2[report.Pass], "fresh run and run 1: %v", s2)
	assert.Zero(t, probesOf(t, d.Project))
}

// A hostile daemon beside a host service that accepts connections and then
// says nothing: the silent service still counts as reached, the hostile
// daemon never passes, and the audit ends.
func TestHostileAnswers(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 2, Mutants: []fixtures.Mutant{fixtures.HostileDaemon}})
	port, accepted := startTarpit(t)
	start := time.Now()
	r := audit(t, d.Project, port)
	took := time.Since(start)
	require.NotNil(t, r.report, "exit %d: %s", r.code, r.stderr)
	t.Logf("audit: exit %d, duration_ms %d (%s wall), tarpit accepted %d connections",
		r.code, r.report.DurationMS, took.Round(time.Millisecond), accepted.Load())
	assert.Equal(t, 1, r.code, "%v", failing(r.report))
	assert.Equal(t, report.VerdictFail, r.report.Verdict)
	assert.NotContains(t, r.stderr, "goroutine")

	// The tarpit was reached from every vantage.
	assert.NotZero(t, accepted.Load(), "no probe connected to the tarpit")
	assertFails(t, r.report, d.Project, checks.EgressHost, "fresh-run")
	for _, run := range d.Runs {
		assertFails(t, r.report, d.Project, checks.EgressHost, "run:"+run.RunID)
	}
	for _, c := range checksOf(r.report, d.Project, checks.EgressHost) {
		if c.Status == report.Fail {
			assert.Contains(t, c.Observed, "connected")
		}
	}

	// The hostile run's daemon: fail or error, never pass, from the fresh
	// run and from the other run.
	hostile := d.Runs[0].RunID + " "
	seen := 0
	for _, id := range []string{checks.DaemonReferencePatch, checks.DaemonGradingGate, checks.DaemonPublicView} {
		for _, c := range checksOf(r.report, d.Project, id) {
			if strings.HasPrefix(c.Target, hostile) {
				seen++
				assert.Contains(t, []report.Status{report.Fail, report.Error}, c.Status,
					"%s %s: %s (%s)", c.ID, c.Vantage, c.Observed, c.Message)
			}
		}
	}
	assert.Equal(t, 3, seen, "three daemon checks, one row each, from the fresh run and from the other run")
	assert.Zero(t, probesOf(t, d.Project))
}

// A probe image that does not exist: the fresh run cannot be probed, the
// audit says so (audit.probe error, every one of its active checks an
// error), exits 2, never passes a check it could not run, and leaves
// nothing behind. A live run is still audited: its probe is the binary
// copied in, not the image.
func TestBadProbeImage(t *testing.T) {
	t.Parallel()
	const bad = "ssebench-audit-probe:doesnotexist"
	d := up(t, fixtures.Options{Runs: 1})
	sweepProbesAtEnd(t, d.Project)
	r := audit(t, d.Project, closedPort(t), "--probe-image", bad)
	require.NotNil(t, r.report, "exit %d: %s", r.code, r.stderr)
	assert.Equal(t, 2, r.code, "%v", failing(r.report))
	assert.Equal(t, report.VerdictError, r.report.Verdict)
	assert.NotContains(t, r.stderr, "goroutine")

	probeErrors := map[string]bool{}
	for _, c := range checksOf(r.report, d.Project, checks.AuditProbe) {
		assert.Equal(t, report.Error, c.Status, c.Vantage)
		probeErrors[c.Vantage] = true
	}
	assert.Equal(t, map[string]bool{"fresh-run": true}, probeErrors)

	// Every check of the fresh run is an error, none a pass.
	reported := map[string]bool{}
	for _, c := range checksOfVantage(r.report, d.Project, "fresh-run") {
		reported[c.ID] = true
		assert.Equal(t, report.Error, c.Status, "%s %s: %s", c.ID, c.Target, c.Observed)
	}
	for _, id := range []string{checks.DNSProxy, checks.ProxyReachable, checks.EgressInternet, checks.EgressHost,
		checks.DNSExternal, checks.EgressDNSDirect, checks.EgressProxyForward} {
		assert.True(t, reported[id], "%s is reported from the fresh run, as an error", id)
	}
	assertVantagePasses(t, r.report, d.Project, "run:"+d.Runs[0].RunID)

	assert.Zero(t, probesOf(t, d.Project))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := api.ImageInspect(ctx, bad)
	assert.True(t, cerrdefs.IsNotFound(err), "%s exists now: %v", bad, err)
}

// toolProc is a running ssebench-audit.
type toolProc struct {
	done chan struct{} // closed once res is set
	res  result
}

// startTool starts the binary with env added to the environment; the test's
// end kills it if it still runs.
func startTool(t *testing.T, env []string, args ...string) *toolProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(cmd.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	p := &toolProc{done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		cancel()
		p.res = result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			p.res.code, p.res.stderr = -1, err.Error()+"\n"+p.res.stderr
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// wait returns the result, with the JSON report parsed when there is one.
func (p *toolProc) wait(t *testing.T) result {
	t.Helper()
	<-p.done
	r := p.res
	if r.code >= 0 && r.code <= 3 && strings.HasPrefix(strings.TrimSpace(r.stdout), "{") {
		r.report = &report.Report{}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), r.report), r.stdout)
		requireSchema(t, "report", []byte(r.stdout))
	}
	return r
}

// waitUntil polls cond while p runs, for at most limit.
func waitUntil(p *toolProc, limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		select {
		case <-p.done:
			return cond()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}

// probesOnAgents counts audit probes attached to the project's agents network.
func probesOnAgents(t *testing.T, d *fixtures.Deployment) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := api.NetworkInspect(ctx, d.Agents.ID, network.InspectOptions{})
	require.NoError(t, err)
	list, err := api.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(
		filters.Arg("label", "ssebench-audit.probe"), filters.Arg("label", "ssebench-audit.project="+d.Project))})
	require.NoError(t, err)
	count := 0
	for _, c := range list {
		if _, ok := n.Containers[c.ID]; ok {
			count++
		}
	}
	return count
}

// sweepProbesAtEnd removes the project's probe containers when the test
// ends (before its deployment goes), whatever the audits left: a safety
// net, the assertions are made before.
func sweepProbesAtEnd(t *testing.T, project string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		list, err := api.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(
			filters.Arg("label", "ssebench-audit.probe"), filters.Arg("label", "ssebench-audit.project="+project))})
		if err != nil {
			t.Errorf("listing probes of %s: %v", project, err)
			return
		}
		for _, c := range list {
			if err := api.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
				t.Errorf("removing probe %.12s: %v", c.ID, err)
			}
		}
	})
}

// socketProxy relays a Unix socket to another, byte for byte, until killed.
type socketProxy struct {
	ln       net.Listener
	target   string
	accepted atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]bool
	killed bool
	wg     sync.WaitGroup
}

func startSocketProxy(t *testing.T, path, target string) *socketProxy {
	t.Helper()
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	p := &socketProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepted.Add(1)
			p.wg.Go(func() { p.relay(c) })
		}
	})
	t.Cleanup(p.kill)
	return p
}

// track registers c, or closes it when the proxy is dead already.
func (p *socketProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.killed {
		c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *socketProxy) relay(client net.Conn) {
	if !p.track(client) {
		return
	}
	defer client.Close()
	upstream, err := net.Dial("unix", p.target)
	if err != nil {
		return
	}
	if !p.track(upstream) {
		return
	}
	defer upstream.Close()
	var wg sync.WaitGroup
	for _, pair := range [][2]net.Conn{{upstream, client}, {client, upstream}} {
		wg.Go(func() {
			_, _ = io.Copy(pair[0], pair[1])
			// Half a connection is no connection: end both directions.
			pair[0].Close()
			pair[1].Close()
		})
	}
	wg.Wait()
}

// kill closes the listener (its socket file goes with it) and every
// connection, in both directions, and waits for the relays to end.
func (p *socketProxy) kill() {
	p.mu.Lock()
	if !p.killed {
		p.killed = true
		_ = p.ln.Close()
		for c := range p.conns {
			_ = c.Close()
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// startTarpit listens on all interfaces, accepts every connection and never
// reads or writes; it returns the port and the number of connections taken.
func startTarpit(t *testing.T) (int, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	require.NoError(t, err)
	var n atomic.Int64
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().(*net.TCPAddr).Port, &n
}
