package checks

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/report"
)

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

// hardeningChecks: one row per run container, failing or warning with a
// reason per finding.
func hardeningChecks(runs []container.InspectResponse) []report.Check {
	var out []report.Check
	for _, r := range runs {
		fs := hardeningFindings(r)
		c := report.Check{ID: catalogue.RunHardening, Vantage: "host", Target: RunName(r),
			Expected: "Docker defaults: unprivileged, own namespaces, no Docker socket, no added capabilities, no published ports",
			Status:   report.Pass, Observed: "Docker defaults"}
		if len(fs) > 0 {
			var what []string
			for _, f := range fs {
				if f.status.Rank() < c.Status.Rank() {
					c.Status = f.status
				}
				what = append(what, string(f.status)+": "+f.what)
			}
			c.Observed = strings.Join(what, "; ")
			c.Message = "the run has more power than an agent needs"
		}
		out = append(out, c)
	}
	return out
}

func hardeningFindings(r container.InspectResponse) []finding {
	h := r.HostConfig
	if h == nil {
		return []finding{{report.Error, "no host configuration in inspect"}}
	}
	var fs []finding
	add := func(s report.Status, format string, a ...any) { fs = append(fs, finding{s, fmt.Sprintf(format, a...)}) }
	if h.Privileged {
		add(report.Fail, "privileged")
	}
	// (The cgroup namespace is not judged: "host" is Docker's default on
	// cgroup v1 hosts.)
	for name, mode := range map[string]string{"network": string(h.NetworkMode), "PID": string(h.PidMode),
		"IPC": string(h.IpcMode), "UTS": string(h.UTSMode), "user": string(h.UsernsMode)} {
		if mode == "host" {
			add(report.Fail, "shares the host's %s namespace", name)
		}
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
	for _, m := range r.Mounts {
		if m.Type != mount.TypeBind {
			continue
		}
		src := filepath.Clean(m.Source)
		switch {
		case reachesDockerSocket(src):
			add(report.Fail, "mounts %s (the Docker API) at %s", src, m.Destination)
		case m.RW && !underResults(src, r):
			add(report.Warn, "writable bind mount of host %s at %s", src, m.Destination)
		}
	}
	var published []string
	if r.NetworkSettings != nil {
		for port, bs := range r.NetworkSettings.Ports {
			for _, b := range bs {
				published = append(published, fmt.Sprintf("%s:%s->%s", b.HostIP, b.HostPort, port))
			}
		}
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
	if len(h.Devices) > 0 {
		add(report.Warn, "has %d host devices", len(h.Devices))
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

// underResults: the run's own results directory (label ssebench.results)
// is the one host directory a run may write.
func underResults(src string, r container.InspectResponse) bool {
	if r.Config == nil {
		return false
	}
	res := r.Config.Labels["ssebench.results"]
	if res == "" {
		return false
	}
	res = filepath.Clean(res)
	return src == res || strings.HasPrefix(src, res+"/")
}
