package checks

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const RunHardening = "run.hardening"

var runHardening = &Check{
	ID:     RunHardening,
	Title:  "No run is privileged, shares host namespaces, mounts the Docker socket, adds capabilities or publishes ports",
	From:   FromHost,
	Remedy: "Start runs only through `ssebench run`, with Docker's defaults.",
	PerRun: true,
	// One row per run container, failing or warning with a reason per
	// finding.
	Host: func(in HostInput) []report.Check {
		var out []report.Check
		for _, r := range in.Runs {
			c := report.Check{Target: r.RunName(), Status: report.Pass, Observed: "Docker defaults",
				Expected: "Docker defaults: unprivileged, own namespaces, no Docker socket, no added capabilities, no published ports"}
			judgeFindings(&c, hardeningFindings(r), "the run has more power than an agent needs")
			out = append(out, c)
		}
		return out
	},
}

// defaultCaps is Docker's default capability set: adding anything else
// gives the agent more than ssebench asks for.
var defaultCaps = map[string]bool{
	"CHOWN": true, "DAC_OVERRIDE": true, "FSETID": true, "FOWNER": true, "MKNOD": true,
	"NET_RAW": true, "SETGID": true, "SETUID": true, "SETFCAP": true, "SETPCAP": true,
	"NET_BIND_SERVICE": true, "SYS_CHROOT": true, "KILL": true, "AUDIT_WRITE": true,
}

// escapeCaps are the capabilities that break out of a container or its
// network isolation; any other addition is a warning.
var escapeCaps = map[string]bool{
	"ALL": true, "SYS_ADMIN": true, "NET_ADMIN": true, "SYS_PTRACE": true, "SYS_MODULE": true,
	"DAC_READ_SEARCH": true, "SYS_RAWIO": true, "SYS_BOOT": true, "BPF": true, "PERFMON": true,
	"SYS_TIME": true, "MAC_ADMIN": true, "MAC_OVERRIDE": true,
}

// dockerSocketPaths are the host paths through which a mount reaches the
// Docker API.
var dockerSocketPaths = []string{"/var/run/docker.sock", "/run/docker.sock"}

// finding is one hardening problem of a run.
type finding struct {
	status report.Status
	what   string
}

// judgeFindings gives a row its worst finding's status and every finding
// as what was observed; none leaves the row as it is.
func judgeFindings(row *report.Check, fs []finding, message string) {
	if len(fs) == 0 {
		return
	}
	what := make([]string, 0, len(fs))
	for _, f := range fs {
		if f.status.Rank() < row.Status.Rank() {
			row.Status = f.status
		}
		what = append(what, string(f.status)+": "+f.what)
	}
	row.Observed = strings.Join(what, "; ")
	row.Message = message
}

func hardeningFindings(r Container) []finding {
	h := r.Hardening
	if h == nil {
		return []finding{{report.Error, "no host configuration in inspect"}}
	}
	var fs []finding
	add := func(s report.Status, format string, a ...any) { fs = append(fs, finding{s, fmt.Sprintf(format, a...)}) }
	if h.Privileged {
		add(report.Fail, "privileged")
	}
	for _, ns := range h.HostNamespaces {
		add(report.Fail, "shares the host's %s namespace", ns)
	}
	var caps []string
	for _, c := range h.CapAdd {
		caps = append(caps, strings.TrimPrefix(strings.ToUpper(c), "CAP_"))
	}
	sort.Strings(caps)
	for _, c := range caps {
		switch {
		case escapeCaps[c]:
			add(report.Fail, "adds capability %s", c)
		case !defaultCaps[c]:
			add(report.Warn, "adds capability %s", c)
		}
	}
	for _, m := range h.Mounts {
		if !m.Bind {
			continue
		}
		src := filepath.Clean(m.Source)
		switch {
		case reachesDockerSocket(src):
			add(report.Fail, "mounts %s (the Docker API) at %s", src, m.Destination)
		case m.RW && !underResults(src, r.ResultsDir):
			add(report.Warn, "writable bind mount of host %s at %s", src, m.Destination)
		}
	}
	var published []string
	for _, b := range r.Published {
		published = append(published, b.String())
	}
	sort.Strings(published)
	if len(published) > 0 {
		add(report.Fail, "publishes %s", strings.Join(published, ", "))
	}
	for _, o := range h.SecurityOpt {
		if strings.HasSuffix(o, "unconfined") || o == "no-new-privileges=false" {
			add(report.Warn, "security option %s", o)
		}
	}
	if h.Devices > 0 {
		add(report.Warn, "has %d host devices", h.Devices)
	}
	return fs
}

// reachesDockerSocket: the socket itself or a directory that holds it.
func reachesDockerSocket(src string) bool {
	for _, s := range dockerSocketPaths {
		if src == s || src == "/" || strings.HasPrefix(s, src+"/") {
			return true
		}
	}
	return false
}

// underResults: the run's own results directory is the one host directory
// a run may write.
func underResults(src, results string) bool {
	if results == "" {
		return false
	}
	results = filepath.Clean(results)
	return src == results || strings.HasPrefix(src, results+"/")
}
