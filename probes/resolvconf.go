package probes

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
)

// resolvConfPath and resolverPort are variables so tests can use a temp file
// and a loopback server of their own.
var (
	resolvConfPath = "/etc/resolv.conf"
	resolverPort   = "53"
)

// maxResolvConf bounds the read: a real resolv.conf is a few hundred bytes.
const maxResolvConf = 64 << 10

var errNoNameserver = errors.New("no nameserver line")

// readNameservers returns the nameserver addresses of a resolv.conf, in
// order, reading at most maxResolvConf bytes.
func readNameservers(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxResolvConf))
	if err != nil {
		return nil, err
	}
	ns := parseNameservers(data)
	if len(ns) == 0 {
		return nil, fmt.Errorf("%s: %w", path, errNoNameserver)
	}
	return ns, nil
}

// parseNameservers follows glibc: "nameserver ADDR" lines, '#' or ';'
// starts a comment; anything that is not an IP address is skipped.
func parseNameservers(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxResolvConf)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "nameserver" {
			continue
		}
		a, err := netip.ParseAddr(f[1])
		if err != nil {
			continue
		}
		out = append(out, a.String())
	}
	return out
}
