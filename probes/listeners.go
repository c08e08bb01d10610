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
	nameProcesses(ctx, root, inodes, ls)
	guessProcesses(ctx, root, ls)
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

// nameProcesses fills Process for sockets whose inode a process holds,
// scanning at most maxProcs processes and maxFDsPerProc fds each.
func nameProcesses(ctx context.Context, root string, inodes map[string][]int, ls []Listener) {
	if len(inodes) == 0 {
		return
	}
	dirs, err := os.ReadDir(root)
	if err != nil {
		return
	}
	seen := 0
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil || ctx.Err() != nil {
			continue
		}
		if seen++; seen > maxProcs {
			return
		}
		pid := filepath.Join(root, d.Name())
		fds, err := os.ReadDir(filepath.Join(pid, "fd"))
		if err != nil {
			continue // not ours to read (not root), or gone
		}
		var cmd string
		for i, fd := range fds {
			if i >= maxFDsPerProc {
				break
			}
			link, err := os.Readlink(filepath.Join(pid, "fd", fd.Name()))
			inode, ok := strings.CutPrefix(link, "socket:[")
			if err != nil || !ok {
				continue
			}
			for _, at := range inodes[strings.TrimSuffix(inode, "]")] {
				if ls[at].Process == "" {
					if cmd == "" {
						cmd = cmdline(pid) + " (pid " + d.Name() + ")"
					}
					ls[at].Process = cmd
				}
			}
		}
	}
}

// guessProcesses names, for sockets nameProcesses could not (reading
// another process's fds needs CAP_SYS_PTRACE, which Docker's default set
// lacks even for root), the one process of the socket's uid whose command
// line names its port, marked as a guess. Command lines and owners are
// readable by anyone. (Not "the only process of that uid": sockets of
// Docker's resolver are held by the engine, outside the container.)
func guessProcesses(ctx context.Context, root string, ls []Listener) {
	missing := false
	for _, l := range ls {
		missing = missing || l.Process == ""
	}
	if !missing {
		return
	}
	type proc struct {
		pid  string
		uid  int
		args []string
	}
	var procs []proc
	dirs, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil || ctx.Err() != nil || len(procs) >= maxProcs {
			continue
		}
		uid, ok := realUID(filepath.Join(root, d.Name(), "status"))
		if !ok {
			continue
		}
		b, _ := readFileAtMost(filepath.Join(root, d.Name(), "cmdline"), 4096)
		procs = append(procs, proc{pid: d.Name(), uid: uid, args: strings.FieldsFunc(string(b), func(r rune) bool {
			return r == 0 || r == ' ' || r == ':' || r == '='
		})})
	}
	for i, l := range ls {
		if l.Process != "" {
			continue
		}
		var byPort []proc
		port := strconv.Itoa(l.Port)
		for _, p := range procs {
			if p.uid != l.UID {
				continue
			}
			for _, a := range p.args {
				if a == port {
					byPort = append(byPort, p)
					break
				}
			}
		}
		if len(byPort) == 1 {
			ls[i].Process = "likely " + cmdline(filepath.Join(root, byPort[0].pid)) + " (pid " + byPort[0].pid + ")"
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

// cmdline is a process's command line, short and printable.
func cmdline(pid string) string {
	b, err := readFileAtMost(filepath.Join(pid, "cmdline"), 4096)
	if err != nil || len(b) == 0 {
		return "?"
	}
	s := strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == 0 {
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, string(b)))
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
