package checks

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

const SocketAdmin = "socket.admin"

var socketAdmin = &Check{
	ID:     SocketAdmin,
	Title:  "The daemon's admin socket is root-only and out of the agent's reach",
	From:   FromInContainer,
	Remedy: "Upgrade the run images: the admin socket belongs at /run/ssebench/admin.sock, 0600, in a 0700 root directory.",
	// On a cluster, in each run pod's task container, by exec.
	Backends: []string{BackendDocker, BackendKubernetes},
	// Each path is examined as root (its real owner and mode: the agent
	// may not even see it, and in sidecar mode the socket sits on a volume
	// the agent's container shares, so its directory is not the only
	// guard) and as every agent-side user (what they can see, write and
	// connect to).
	Inside: &Inside{
		AsUsers: func(run Container) []probes.Task {
			var ts []probes.Task
			for i, sp := range socketPaths(run) {
				ts = append(ts, task(fmt.Sprintf("file.%d", i), probes.Task{Kind: probes.KindFile, Path: sp}),
					task(fmt.Sprintf("unix.%d", i), probes.Task{Kind: probes.KindUnix, Path: sp}))
			}
			return ts
		},
		AsRoot: func(run Container) []probes.Task {
			var ts []probes.Task
			for i, sp := range socketPaths(run) {
				ts = append(ts, task(fmt.Sprintf("file.%d", i), probes.Task{Kind: probes.KindFile, Path: sp}))
			}
			return ts
		},
		Judge: func(run Container, seen InsideResults) []report.Check {
			paths := socketPaths(run)
			if seen.Err == nil && len(seen.Users) == 0 {
				seen.Err = fmt.Errorf("the probe ran as no user")
			}
			if seen.Err != nil {
				return []report.Check{{Status: report.Error, Target: strings.Join(paths, ", "),
					Expected: "probe runs as the agent", Observed: seen.Err.Error(), Message: "the in-container probe could not run"}}
			}
			var out []report.Check
			for i, sp := range paths {
				out = append(out, judgeSocket(sp, sp == adminSocketOld, i, seen))
			}
			return out
		},
	},
}

// Admin socket locations (docs/ssebench.md): the configured one, and where
// older sidecar images put it, in the agent-writable archive directory.
const (
	adminSocketEnv     = "SSE_ADMIN_SOCKET"
	adminSocketDefault = "/run/ssebench/admin.sock"
	adminSocketOld     = "/tmp/sse-archive/admin.sock"
)

// socketPaths lists the admin socket paths to examine in a run.
func socketPaths(r Container) []string {
	configured := adminSocketDefault
	if v, ok := r.EnvValue(adminSocketEnv); ok && strings.HasPrefix(v, "/") {
		configured = path.Clean(v)
	}
	return uniq([]string{configured, adminSocketOld})
}

// judgeSocket: root-owned, 0600, in a 0700 root directory, as root sees
// it; the directory not writable and connect() refused as every
// agent-side user.
func judgeSocket(sp string, old bool, i int, seen InsideResults) report.Check {
	file, unix := fmt.Sprintf("file.%d", i), fmt.Sprintf("unix.%d", i)
	var names []string
	for _, u := range seen.Users {
		names = append(names, u.User)
	}
	c := report.Check{Target: sp,
		Expected: "root-owned 0600 socket in a 0700 root directory; connect() fails as " + strings.Join(names, " and ")}
	root := seen.Root.Get(file).Result
	if !seen.Root.Has(file) && seen.RootErr != "" {
		root.Detail = seen.RootErr
	}
	var problems, facts []string
	if f := root.File; f != nil && root.Outcome == probes.Exists {
		facts = append(facts, fmt.Sprintf("%s uid %d %04o", f.Mode, f.UID, f.Perm))
		if !f.Socket {
			problems = append(problems, "not a socket")
		}
		if f.UID != 0 {
			problems = append(problems, fmt.Sprintf("owned by uid %d", f.UID))
		}
		if f.Perm&0o077 != 0 {
			problems = append(problems, fmt.Sprintf("mode %04o (group/other bits)", f.Perm))
		}
		if old {
			problems = append(problems, "in the archive directory of old sidecar images")
		}
		if d := f.Dir; d != nil {
			facts = append(facts, fmt.Sprintf("dir uid %d %04o", d.UID, d.Perm))
			if d.UID != 0 || d.Perm&0o077 != 0 {
				problems = append(problems, fmt.Sprintf("directory uid %d mode %04o", d.UID, d.Perm))
			}
		}
	} else {
		facts = append(facts, "as root: "+string(root.Outcome))
	}
	for _, u := range seen.Users {
		st := u.Results.Get(file).Result
		if st.Outcome != root.Outcome {
			facts = append(facts, fmt.Sprintf("stat as %s: %s", u.User, st.Outcome))
		}
		if st.File != nil && st.File.DirWritable && root.Outcome == probes.Exists {
			problems = append(problems, "directory writable by "+u.User)
		}
		conn := u.Results.Get(unix).Result
		facts = append(facts, fmt.Sprintf("connect as %s: %s", u.User, conn.Outcome))
		if conn.Outcome == probes.Connected {
			problems = append(problems, "connect() succeeded as "+u.User+": the agent reaches the admin API")
		}
	}
	c.Observed = strings.Join(facts, "; ")
	switch {
	case root.Outcome == probes.Error || root.Outcome == probes.Denied:
		c.Status, c.Message = report.Error, "the probe could not examine the socket as root: "+root.Detail
	case len(problems) > 0:
		sort.Strings(problems)
		c.Status, c.Message = report.Fail, strings.Join(problems, "; ")
	case root.Outcome == probes.NotFound && !old:
		c.Status, c.Message = report.Skip, "no admin socket at this path"
	case root.Outcome == probes.NotFound:
		c.Status, c.Message = report.Pass, "no socket at the old sidecar path"
	default:
		c.Status = report.Pass
	}
	return c
}
