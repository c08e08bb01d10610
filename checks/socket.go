package checks

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// Admin socket locations (ssebench-facts.md): the configured one, and where
// older sidecar images put it, in the agent-writable archive directory.
const (
	adminSocketEnv     = "SSE_ADMIN_SOCKET"
	adminSocketDefault = "/run/ssebench/admin.sock"
	adminSocketOld     = "/tmp/sse-archive/admin.sock"
	agentUser          = "1000:1000" // model
	runnerName         = "sse-runner"
)

// socketPaths lists the admin socket paths to examine in a run.
func socketPaths(r container.InspectResponse) []string {
	configured := adminSocketDefault
	if r.Config != nil {
		for _, e := range r.Config.Env {
			if v, ok := strings.CutPrefix(e, adminSocketEnv+"="); ok && strings.HasPrefix(v, "/") {
				configured = path.Clean(v)
			}
		}
	}
	return uniq([]string{configured, adminSocketOld})
}

// socketPlan: stat and connect() each path.
func socketPlan(paths []string, timeout time.Duration) probes.Plan {
	p := probes.Plan{TimeoutMS: timeout.Milliseconds()}
	for i, sp := range paths {
		p.Tasks = append(p.Tasks,
			probes.Task{ID: fmt.Sprintf("file.%d", i), Kind: probes.KindFile, Path: sp},
			probes.Task{ID: fmt.Sprintf("unix.%d", i), Kind: probes.KindUnix, Path: sp})
	}
	return p
}

// socketChecks judges one run's admin socket from what the in-container
// probe reported (m), or from why it could not run (err).
func socketChecks(run container.InspectResponse, paths []string, m probes.MultiReport, err error, took int64) []report.Check {
	vantage := "in-container:" + RunName(run)
	// The users the probe ran as: the agent, and sse-runner where the image
	// has one.
	var users []string
	reps := map[string]probes.Report{}
	for _, u := range m.Users {
		if u.Report == nil {
			if u.User == agentUser && err == nil {
				err = fmt.Errorf("the probe could not run as %s: %s", u.User, u.Error)
			}
			continue
		}
		name := fmt.Sprintf("%d:%d", u.UID, u.GID)
		if u.User != name {
			name = u.User + " (" + name + ")"
		}
		users = append(users, name)
		reps[name] = *u.Report
	}
	if err == nil && len(users) == 0 {
		err = fmt.Errorf("the probe ran as no user")
	}
	if err != nil {
		return []report.Check{{ID: catalogue.SocketAdmin, Status: report.Error, Vantage: vantage,
			Target: strings.Join(paths, ", "), Expected: "probe runs as the agent", Observed: err.Error(),
			Message: "the in-container probe could not run", DurationMS: took}}
	}
	var out []report.Check
	for i, sp := range paths {
		c := judgeSocket(sp, sp == adminSocketOld, i, users, reps)
		c.Vantage, c.DurationMS = vantage, took
		out = append(out, c)
	}
	return out
}

// judgeSocket: root-owned, 0600, in a 0700 root directory that the agent
// cannot write, and connect() refused as every agent-side user.
func judgeSocket(sp string, old bool, i int, users []string, reps map[string]probes.Report) report.Check {
	c := report.Check{ID: catalogue.SocketAdmin, Target: sp,
		Expected: "root-owned 0600 socket in a 0700 root directory; connect() fails as " + strings.Join(users, " and ")}
	byID := func(u, id string) probes.Result {
		for _, r := range reps[u].Results {
			if r.ID == id {
				return r
			}
		}
		return probes.Result{Outcome: probes.Error, Detail: "no result"}
	}
	agent := byID(users[0], fmt.Sprintf("file.%d", i))
	var problems, facts []string
	if agent.Outcome != probes.Exists {
		facts = append(facts, fmt.Sprintf("stat as %s: %s", users[0], agent.Outcome))
	}
	if f := agent.File; f != nil && agent.Outcome == probes.Exists {
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
	}
	if f := agent.File; f != nil && f.Dir != nil {
		facts = append(facts, fmt.Sprintf("dir uid %d %04o", f.Dir.UID, f.Dir.Perm))
		// Denied: the socket is there but hidden from the agent; its
		// directory must still be root's and closed.
		if (agent.Outcome == probes.Exists || agent.Outcome == probes.Denied) && (f.Dir.UID != 0 || f.Dir.Perm&0o077 != 0) {
			problems = append(problems, fmt.Sprintf("directory uid %d mode %04o", f.Dir.UID, f.Dir.Perm))
		}
	}
	for _, u := range users {
		f := byID(u, fmt.Sprintf("file.%d", i))
		if f.File != nil && f.File.DirWritable && agent.Outcome == probes.Exists {
			problems = append(problems, "directory writable by "+u)
		}
		conn := byID(u, fmt.Sprintf("unix.%d", i))
		facts = append(facts, fmt.Sprintf("connect as %s: %s", u, conn.Outcome))
		if conn.Outcome == probes.Connected {
			problems = append(problems, "connect() succeeded as "+u+": the agent reaches the admin API")
		}
	}
	c.Observed = strings.Join(facts, "; ")
	switch {
	case agent.Outcome == probes.Error:
		c.Status, c.Message = report.Error, "the probe could not examine the socket: "+agent.Detail
	case len(problems) > 0:
		sort.Strings(problems)
		c.Status, c.Message = report.Fail, strings.Join(problems, "; ")
	case agent.Outcome == probes.NotFound && !old:
		c.Status, c.Message = report.Skip, "no admin socket at this path"
	case agent.Outcome == probes.NotFound:
		c.Status, c.Message = report.Pass, "no socket at the old sidecar path"
	default:
		c.Status = report.Pass
	}
	return c
}
