package probes

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseUser(t *testing.T) {
	uid, gid, err := parseUser("1000:1000")
	require.NoError(t, err)
	assert.Equal(t, [2]int{1000, 1000}, [2]int{uid, gid})
	for _, bad := range []string{"sse-runner", "1000", "a:b", "-1:0", "1:99999999999"} {
		_, _, err := parseUser(bad)
		assert.Error(t, err, bad)
	}
}

// A user missing from the container's passwd is reported, not guessed.
func TestRunAsUnknownUser(t *testing.T) {
	passwd := filepath.Join(t.TempDir(), "passwd")
	require.NoError(t, os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644))
	m := RunAs(t.Context(), "/nonexistent", "/nonexistent", []string{"sse-runner"}, passwd)
	require.Len(t, m.Users, 1)
	assert.Equal(t, "no such user", m.Users[0].Error)
	assert.Nil(t, m.Users[0].Report)
}

const goodMulti = `{"users":[{"user":"1000:1000","uid":1000,"gid":1000,"report":{"version":"v","results":[{"id":"a","kind":"unix","outcome":"denied","duration_ms":1}],"uid":1000,"gid":1000}},{"user":"sse-runner","uid":0,"gid":0,"error":"no such user"}],"removed":true}`

func TestParseMultiReport(t *testing.T) {
	good := goodMulti
	m, err := ParseMultiReport(strings.NewReader(good), 1<<20)
	require.NoError(t, err)
	assert.True(t, m.Removed)
	assert.Equal(t, Denied, m.Users[0].Report.Results[0].Outcome)
	for name, bad := range map[string]string{
		"unknown outcome": strings.Replace(good, `"denied"`, `"maybe"`, 1),
		"unknown field":   strings.Replace(good, `"removed"`, `"deleted"`, 1),
		"trailing":        good + "{}",
		"too big":         good + strings.Repeat(" ", 1<<20),
	} {
		_, err := ParseMultiReport(strings.NewReader(bad), 1<<20)
		assert.Error(t, err, name)
	}
}

// The child drops root's supplementary groups: the agent has none of them.
func TestChildCommandDropsGroups(t *testing.T) {
	cmd := childCommand(t.Context(), "/x", "/plan", 1000, 1001)
	c := cmd.SysProcAttr.Credential
	require.NotNil(t, c)
	assert.Equal(t, [2]uint32{1000, 1001}, [2]uint32{c.Uid, c.Gid})
	assert.False(t, c.NoSetGroups, "setgroups is called")
	assert.Empty(t, c.Groups, "with no groups")
}

// What an exec into a run prints is written by a process the agent may
// control: whatever it says, an accepted report holds what ParseReport
// promises, in every user's report and in the network report.
func FuzzParseMultiReport(f *testing.F) {
	for _, s := range []string{
		goodMulti,
		strings.Replace(goodMulti, `"removed":true`, `"network":`+newReport+`,"removed":true`, 1),
		strings.Replace(goodMulti, `"removed":true`, `"network_error":"x","removed":false,"error":"\ud800"`, 1),
		`{"users":[{"user":"u","report":{"results":[{"id":"","outcome":"error"}]}}],"removed":true}`,
		`{"users":null,"network":{"results":[{"id":"a","outcome":"maybe"}]},"removed":true}`,
		`{"users":[],"removed":true}{}`,
		`{"users":[{"report":null}],"network":null,"removed":false}`,
		goodMulti[:90],
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMultiReport(bytes.NewReader(data), 1<<16)
		if err != nil {
			return
		}
		for _, u := range m.Users {
			if u.Report != nil {
				requireValidReport(t, *u.Report)
			}
		}
		if m.Root != nil {
			requireValidReport(t, *m.Root)
		}
	})
}
