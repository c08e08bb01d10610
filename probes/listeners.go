package probes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Bounds on what the listeners probe reads: the tables, the processes
// scanned for the sockets' owners, and what it reports.
const (
	MaxListeners     = 512
	maxNetTable      = 1 << 20
	maxProcs         = 4096
	maxFDsPerProc    = 1024
	maxProcessString = 80
)

// TCP and UDP states in /proc/net/{tcp,udp}: a listening TCP socket, and
// a bound, unconnected UDP one (which receives from anyone).
const (
	tcpListen   = "0A"
	udpUnconned = "07"
)

// probeListeners reads, from the proc root at t.Path (default /proc), the
// sockets the probe's own network namespace listens on: /proc/net/tcp,
// tcp6 (LISTEN) and udp, udp6 (bound, unconnected), with each socket's uid
// and, where the probe may read other processes' fds (as root), the
// command line of a process that holds it. A run's listeners are what
// another agent on the network could drive.
func probeListeners(ctx context.Context, t Task) Result {
	root := t.Path
	if root == "" {
		root = "/proc"
	}
	r := Result{Peer: root}
	var ls []Listener
	inodes := map[string][]int{} // inode -> indexes into ls
	read := 0
	for _, table := range []struct{ file, proto, state string }{
		{"tcp", "tcp", tcpListen}, {"tcp6", "tcp", tcpListen}, {"udp", "udp", udpUnconned}, {"udp6", "udp", udpUnconned},
	} {
		data, err := readFileAtMost(filepath.Join(root, "net", table.file), maxNetTable)
		if err != nil {
			continue // no IPv6 in the kernel, say
		}
		read++
		for _, e := range parseNetTable(data) {
			if e.state != table.state || len(ls) >= MaxListeners {
				continue
			}
			inodes[e.inode] = append(inodes[e.inode], len(ls))
			ls = append(ls, Listener{Proto: table.proto, Address: e.ip.String(), Port: e.port, UID: e.uid})
		}
	}
	if read == 0 {
		r.Outcome, r.Detail = Error, "no readable table under "+filepath.Join(root, "net")
		return r
	}
	if len(ls) > 0 {
		nameProcesses(ls, inodes, scanProcesses(ctx, root))
	}
	sort.SliceStable(ls, func(i, j int) bool {
		if ls[i].Port != ls[j].Port {
			return ls[i].Port < ls[j].Port
		}
		return ls[i].Proto+ls[i].Address < ls[j].Proto+ls[j].Address
	})
	r.Outcome, r.Listeners = Listed, ls
	return r
}

// netEntry is one line of a /proc/net table.
type netEntry struct {
	ip    net.IP
	port  int
	state string
	uid   int
	inode string
}

// parseNetTable reads /proc/net/{tcp,tcp6,udp,udp6}: after a header,
// "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt
// uid timeout inode ...", addresses as hex words in host byte order.
// Lines that do not parse are skipped.
func parseNetTable(data []byte) []netEntry {
	var out []netEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for first := true; sc.Scan(); first = false {
		f := strings.Fields(sc.Text())
		if first || len(f) < 10 {
			continue
		}
		host, port, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		ip := parseHexIP(host)
		p, err1 := strconv.ParseUint(port, 16, 16)
		uid, err2 := strconv.Atoi(f[7])
		if ip == nil || err1 != nil || err2 != nil {
			continue
		}
		out = append(out, netEntry{ip: ip, port: int(p), state: f[3], uid: uid, inode: f[9]})
	}
	return out
}

// parseHexIP decodes an address of /proc/net: 8 hex digits (IPv4) or 32
// (IPv6), as 32-bit words in the kernel's (little-endian) byte order.
func parseHexIP(s string) net.IP {
	b, err := hex.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return nil
	}
	ip := make(net.IP, len(b))
	for i := 0; i < len(b); i += 4 {
		binary.BigEndian.PutUint32(ip[i:], binary.LittleEndian.Uint32(b[i:]))
	}
	return ip
}

// process is what the listeners probe reads of one process.
type process struct {
	pid     string
	uid     int
	cmdline string   // short and printable
	args    []string // its words, split at separators, to find a port
	sockets []string // inodes of the sockets it holds, where its fds are readable
}

// scanProcesses reads, in one pass over at most maxProcs processes, each
// one's uid, command line and (at most maxFDsPerProc) sockets.
func scanProcesses(ctx context.Context, root string) []process {
	dirs, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []process
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil || ctx.Err() != nil {
			continue
		}
		if len(out) >= maxProcs {
			break
		}
		dir := filepath.Join(root, d.Name())
		uid, ok := realUID(filepath.Join(dir, "status"))
		if !ok {
			continue // gone
		}
		raw, _ := readFileAtMost(filepath.Join(dir, "cmdline"), 4096)
		p := process{pid: d.Name(), uid: uid, cmdline: printableCmdline(raw),
			args: strings.FieldsFunc(string(raw), func(r rune) bool { return r == 0 || r == ' ' || r == ':' || r == '=' })}
		fds, _ := os.ReadDir(filepath.Join(dir, "fd")) // not ours to read without CAP_SYS_PTRACE
		for i, fd := range fds {
			if i >= maxFDsPerProc {
				break
			}
			link, err := os.Readlink(filepath.Join(dir, "fd", fd.Name()))
			if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
				p.sockets = append(p.sockets, strings.TrimSuffix(inode, "]"))
			}
		}
		out = append(out, p)
	}
	return out
}

// nameProcesses fills Process: the process holding the socket, where its
// fds could be read; else, marked as a guess, the one process of the
// socket's uid whose command line names its port (reading another
// process's fds needs CAP_SYS_PTRACE, which Docker's default set lacks
// even for root, while command lines and owners are readable by anyone).
// Not "the only process of that uid": the sockets of Docker's resolver
// are held by the engine, outside the container.
func nameProcesses(ls []Listener, inodes map[string][]int, procs []process) {
	for _, p := range procs {
		for _, inode := range p.sockets {
			for _, at := range inodes[inode] {
				if ls[at].Process == "" {
					ls[at].Process = p.cmdline + " (pid " + p.pid + ")"
				}
			}
		}
	}
	for i, l := range ls {
		if l.Process != "" {
			continue
		}
		var byPort []process
		port := strconv.Itoa(l.Port)
		for _, p := range procs {
			if p.uid == l.UID && slices.Contains(p.args, port) {
				byPort = append(byPort, p)
			}
		}
		if len(byPort) == 1 {
			ls[i].Process = "likely " + byPort[0].cmdline + " (pid " + byPort[0].pid + ")"
		}
	}
}

// realUID reads the real uid from a /proc/<pid>/status.
func realUID(status string) (int, bool) {
	b, err := readFileAtMost(status, 16<<10)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				uid, err := strconv.Atoi(f[0])
				return uid, err == nil
			}
		}
	}
	return 0, false
}

// printableCmdline is a command line as read from /proc, short and
// printable.
func printableCmdline(b []byte) string {
	s := strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == 0 {
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, string(b)))
	if s == "" {
		return "?"
	}
	if len(s) > maxProcessString {
		s = s[:maxProcessString] + "…"
	}
	return s
}

// readFileAtMost reads at most max bytes of a file.
func readFileAtMost(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := ReadAtMost(f, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
