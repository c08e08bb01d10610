package probes

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A proc root as a run's namespace shows it: a daemon on 0.0.0.0:4263, an
// agent-side server on 127.0.0.1:4096 as uid 1000, a connection (not a
// listener), an IPv6 listener, a DNS socket bound on UDP.
func fakeProc(t *testing.T) string {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "net"), 0o755))
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(body), 0o644))
	}
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	write("net/tcp", header+
		"   0: 00000000:10A7 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0 100 0 0 10 0\n"+
		"   1: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 2222 1 0 100 0 0 10 0\n"+
		"   2: 0200090A:10A7 0300090A:D431 01 00000000:00000000 00:00000000 00000000     0        0 3333 1 0 100 0 0 10 0\n"+
		"   3: garbage\n")
	write("net/tcp6", header+
		"   0: 00000000000000000000000000000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4444 1 0 100 0 0 10 0\n")
	write("net/tcp", header+
		"   0: 00000000:10A7 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0 100 0 0 10 0\n"+
		"   1: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 2222 1 0 100 0 0 10 0\n"+
		"   2: 0200090A:10A7 0300090A:D431 01 00000000:00000000 00:00000000 00000000     0        0 3333 1 0 100 0 0 10 0\n"+
		"   3: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 6666 1 0 100 0 0 10 0\n"+
		"   4: garbage\n")
	write("net/udp", header+
		"   0: 0B00007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 5555 2 0 0\n")
	// udp6 missing: a kernel without IPv6 UDP is fine.
	for pid, p := range map[string]struct {
		cmd   string
		socks []string
	}{
		"1":  {"ssebench-daemon\x00--listen\x00:4263\x00", []string{"1111"}},
		"42": {"opencode\x00serve\x00--port\x004096\x00", []string{"2222", "4444"}},
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, pid, "fd"), 0o755))
		write(filepath.Join(pid, "cmdline"), p.cmd)
		for i, s := range p.socks {
			require.NoError(t, os.Symlink("socket:["+s+"]", filepath.Join(root, pid, "fd", strconv.Itoa(3+i))))
		}
		require.NoError(t, os.Symlink("/dev/null", filepath.Join(root, pid, "fd", "0")))
	}
	// A process whose fds cannot be read (another uid, no CAP_SYS_PTRACE):
	// named by its uid and the port in its command line.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "77"), 0o755))
	write("77/cmdline", "python3\x00-m\x00http.server\x008080\x00")
	write("77/status", "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\n")
	write("1/status", "Uid:\t0\t0\t0\t0\n")
	write("42/status", "Uid:\t1000\t1000\t1000\t1000\n")
	return root
}

func TestListeners(t *testing.T) {
	r := probeListeners(context.Background(), Task{Kind: KindListeners, Path: fakeProc(t)})
	require.Equal(t, Listed, r.Outcome, r.Detail)
	assert.Equal(t, []Listener{
		{Proto: "udp", Address: "127.0.0.11", Port: 53, UID: 0},
		{Proto: "tcp", Address: "::", Port: 3000, UID: 1000, Process: "opencode serve --port 4096 (pid 42)"},
		{Proto: "tcp", Address: "127.0.0.1", Port: 4096, UID: 1000, Process: "opencode serve --port 4096 (pid 42)"},
		{Proto: "tcp", Address: "0.0.0.0", Port: 4263, UID: 0, Process: "ssebench-daemon --listen :4263 (pid 1)"},
		{Proto: "tcp", Address: "0.0.0.0", Port: 8080, UID: 1000, Process: "likely python3 -m http.server 8080 (pid 77)"},
	}, r.Listeners)

	r = probeListeners(context.Background(), Task{Kind: KindListeners, Path: t.TempDir()})
	assert.Equal(t, Error, r.Outcome, "no tables at all")
}

// On this machine's own /proc: a socket this test opens is listed, with
// this process's uid and command line.
func TestListenersLive(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	r := probeListeners(context.Background(), Task{Kind: KindListeners})
	require.Equal(t, Listed, r.Outcome, r.Detail)
	var found *Listener
	for i, x := range r.Listeners {
		if x.Port == port && x.Address == "127.0.0.1" {
			found = &r.Listeners[i]
		}
	}
	require.NotNil(t, found, "port %d in %v", port, r.Listeners)
	assert.Equal(t, os.Getuid(), found.UID)
	assert.Contains(t, found.Process, "(pid "+strconv.Itoa(os.Getpid())+")")
}

func TestParseHexIP(t *testing.T) {
	assert.Equal(t, "10.9.0.2", parseHexIP("0200090A").String())
	assert.Equal(t, "::1", parseHexIP("00000000000000000000000001000000").String())
	assert.Equal(t, "fe80::1", parseHexIP("000080FE000000000000000001000000").String())
	assert.Nil(t, parseHexIP("zz"))
	assert.Nil(t, parseHexIP("0102"))
}
