package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

func socketReport(file probes.Result, conn probes.Outcome) probes.Report {
	file.ID = "file.0"
	return probes.Report{Results: []probes.Result{file, {ID: "unix.0", Outcome: conn}}}
}

func TestJudgeSocket(t *testing.T) {
	closedDir := &probes.FileResult{UID: 0, Perm: 0o700}
	for name, tc := range map[string]struct {
		file probes.Result
		conn probes.Outcome
		old  bool
		want report.Status
		says string
	}{
		"current layout, hidden from the agent": {probes.Result{Outcome: probes.Denied, File: &probes.FileResult{UID: -1, Dir: closedDir}}, probes.Denied, false, report.Pass, ""},
		"open socket": {probes.Result{Outcome: probes.Exists, File: &probes.FileResult{Socket: true, UID: 0, Perm: 0o666,
			Dir: &probes.FileResult{UID: 0, Perm: 0o777}, DirWritable: true}}, probes.Connected, false, report.Fail, "connect() succeeded"},
		"socket in the archive directory": {probes.Result{Outcome: probes.Exists, File: &probes.FileResult{Socket: true, UID: 0, Perm: 0o600,
			Dir: &probes.FileResult{UID: 0, Perm: 0o700}}}, probes.Denied, true, report.Fail, "archive directory"},
		"no socket": {probes.Result{Outcome: probes.NotFound}, probes.NotFound, false, report.Skip, ""},
		"hidden, but its directory is not root's": {probes.Result{Outcome: probes.Denied, File: &probes.FileResult{UID: -1,
			Dir: &probes.FileResult{UID: 1000, Perm: 0o700}}}, probes.Denied, false, report.Fail, "directory uid 1000"},
		"probe error": {probes.Result{Outcome: probes.Error, Detail: "boom"}, probes.Error, false, report.Error, "boom"},
	} {
		c := judgeSocket("/run/ssebench/admin.sock", tc.old, 0, []string{"1000:1000"},
			map[string]probes.Report{"1000:1000": socketReport(tc.file, tc.conn)})
		assert.Equal(t, tc.want, c.Status, "%s: %s / %s", name, c.Observed, c.Message)
		assert.Contains(t, c.Message, tc.says, name)
	}
}
