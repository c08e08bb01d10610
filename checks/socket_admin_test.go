package checks

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// seenSocket is what the in-run exec saw of the admin socket (path 0): as
// root, and as the agent (stat and connect).
func seenSocket(root, agent probes.Result, conn probes.Outcome) InsideResults {
	return InsideResults{
		Root: Results{{Name: "file.0", Result: root}},
		Users: []UserResults{{User: AgentUser, Results: Results{
			{Name: "file.0", Result: agent}, {Name: "unix.0", Result: probes.Result{Outcome: conn}}}}},
	}
}

func socketFile(perm uint32, dir *probes.FileResult) probes.Result {
	return probes.Result{Outcome: probes.Exists, File: &probes.FileResult{Mode: "Srw-------", Socket: true, UID: 0, Perm: perm, Dir: dir}}
}

func TestJudgeSocket(t *testing.T) {
	closedDir := &probes.FileResult{UID: 0, Perm: 0o700}
	hidden := probes.Result{Outcome: probes.Denied, File: &probes.FileResult{UID: -1, Dir: closedDir}}
	for name, tc := range map[string]struct {
		seen InsideResults
		old  bool
		want report.Status
		says string
	}{
		"current layout, hidden from the agent": {seenSocket(socketFile(0o600, closedDir), hidden, probes.Denied), false, report.Pass, ""},
		// The defect of old: the agent cannot stat it, so only root sees
		// that anyone who gets at the directory (a sidecar volume) may
		// connect.
		"world-writable socket in a closed directory": {seenSocket(socketFile(0o666, closedDir), hidden, probes.Denied),
			false, report.Fail, "mode 0666"},
		"socket owned by the agent": {seenSocket(probes.Result{Outcome: probes.Exists, File: &probes.FileResult{Socket: true, UID: 1000, Perm: 0o600, Dir: closedDir}},
			hidden, probes.Denied), false, report.Fail, "owned by uid 1000"},
		"open socket": {seenSocket(socketFile(0o666, &probes.FileResult{UID: 0, Perm: 0o777}),
			probes.Result{Outcome: probes.Exists, File: &probes.FileResult{Socket: true, Perm: 0o666, DirWritable: true}},
			probes.Connected), false, report.Fail, "connect() succeeded"},
		"socket in the archive directory": {seenSocket(socketFile(0o600, closedDir), hidden, probes.Denied), true, report.Fail, "archive directory"},
		"no socket": {seenSocket(probes.Result{Outcome: probes.NotFound}, probes.Result{Outcome: probes.NotFound}, probes.NotFound),
			false, report.Skip, ""},
		"hidden, but its directory is not root's": {seenSocket(socketFile(0o600, &probes.FileResult{UID: 1000, Perm: 0o700}), hidden, probes.Denied),
			false, report.Fail, "directory uid 1000"},
		"probe error as root": {seenSocket(probes.Result{Outcome: probes.Error, Detail: "boom"}, hidden, probes.Denied),
			false, report.Error, "boom"},
	} {
		c := judgeSocket("/run/ssebench/admin.sock", tc.old, 0, tc.seen)
		assert.Equal(t, tc.want, c.Status, "%s: %s / %s", name, c.Observed, c.Message)
		assert.Contains(t, c.Message, tc.says, name)
	}
}

// Without root's view the socket's real mode is unknown: an error, never a
// pass on what the agent could not see.
func TestJudgeSocketWithoutRoot(t *testing.T) {
	seen := seenSocket(socketFile(0o600, nil), probes.Result{Outcome: probes.Denied}, probes.Denied)
	seen.Root, seen.RootErr = nil, "reading the plan: no such file"
	c := judgeSocket("/run/ssebench/admin.sock", false, 0, seen)
	assert.Equal(t, report.Error, c.Status)
	assert.Contains(t, c.Message, "no such file")
}

func TestSocketAdminInside(t *testing.T) {
	run := runCtr("2", "ra", "p_agents")
	run.Env = []string{"SSE_ADMIN_SOCKET=/srv/x/../admin.sock"}
	assert.Equal(t, []string{"/srv/admin.sock", adminSocketOld}, socketPaths(run))
	assert.Len(t, socketAdmin.Inside.AsUsers(run), 4, "stat and connect() per path")
	assert.Len(t, socketAdmin.Inside.AsRoot(run), 2, "stat per path")

	cs := socketAdmin.Inside.Judge(run, InsideResults{Err: errors.New("copying the probe into the run: read-only file system")})
	require.Len(t, cs, 1)
	assert.Equal(t, report.Error, cs[0].Status)
	assert.Contains(t, cs[0].Observed, "read-only")
	cs = socketAdmin.Inside.Judge(run, InsideResults{})
	require.Len(t, cs, 1)
	assert.Contains(t, cs[0].Observed, "ran as no user")
}
