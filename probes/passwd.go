package probes

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// PasswdEntry is one line of /etc/passwd.
type PasswdEntry struct {
	Name     string
	UID, GID int
	Home     string
}

// ParsePasswd reads an /etc/passwd (at most max bytes; more is an error,
// so a cut file never passes for a whole one) and returns its entries by
// name. Blank lines, comments, NIS lines ("+", "-") and malformed lines
// (not 7 fields, an empty name, an id that is not a decimal uint32) are
// skipped; the first entry of a name wins, as getpwnam(3) does.
func ParsePasswd(r io.Reader, max int64) (map[string]PasswdEntry, error) {
	data, err := ReadAtMost(r, max)
	if err != nil {
		return nil, fmt.Errorf("passwd: %w", err)
	}
	out := make(map[string]PasswdEntry)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		e, ok := parsePasswdLine(string(bytes.TrimSuffix(line, []byte("\r"))))
		if !ok {
			continue
		}
		if _, dup := out[e.Name]; !dup {
			out[e.Name] = e
		}
	}
	return out, nil
}

// parsePasswdLine parses "name:password:uid:gid:gecos:home:shell".
func parsePasswdLine(line string) (PasswdEntry, bool) {
	if strings.HasPrefix(strings.TrimLeft(line, " \t"), "#") {
		return PasswdEntry{}, false
	}
	f := strings.Split(line, ":")
	if len(f) != 7 {
		return PasswdEntry{}, false
	}
	name := f[0]
	if name == "" || name[0] == '+' || name[0] == '-' || strings.ContainsAny(name, " \t\x00") {
		return PasswdEntry{}, false
	}
	uid, ok1 := parseID(f[2])
	gid, ok2 := parseID(f[3])
	if !ok1 || !ok2 {
		return PasswdEntry{}, false
	}
	return PasswdEntry{Name: name, UID: uid, GID: gid, Home: f[5]}, true
}

// parseID accepts a decimal uint32 (digits only: no sign, no space).
func parseID(s string) (int, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n > math.MaxInt {
		return 0, false
	}
	return int(n), true
}
