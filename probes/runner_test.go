package probes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	udpDNS, _ := dnsServers(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	httpAddr := rawTCP(t, func(c net.Conn) {
		readHead(c)
		c.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"))
	})
	refused := closedTCPPort(t)

	p := Plan{TimeoutMS: 300, Tasks: []Task{
		{ID: "dns", Kind: KindDNS, Name: "servfail.test", Address: udpDNS},
		{ID: "tcp-ok", Kind: KindTCP, Address: ln.Addr().String()},
		{ID: "tcp-refused", Kind: KindTCP, Address: refused},
		{ID: "bogus", Kind: "smtp", Address: "127.0.0.1:25"},
		{ID: "http", Kind: KindHTTP, Address: httpAddr, Target: "/reference/patch"},
		{ID: "dns-timeout", Kind: KindDNS, Name: "timeout.test", Address: udpDNS, TimeoutMS: 100},
	}}
	rep := RunPlan(context.Background(), p)
	assert.Equal(t, Version, rep.Version)
	require.Len(t, rep.Results, len(p.Tasks))
	want := []Outcome{ServFail, Connected, Refused, Error, Response, Timeout}
	for i, r := range rep.Results {
		assert.Equal(t, p.Tasks[i].ID, r.ID, "order kept")
		assert.Equal(t, p.Tasks[i].Kind, r.Kind)
		assert.Equal(t, want[i], r.Outcome, "%s: %s", r.ID, r.Detail)
		assert.Equal(t, p.Tasks[i].Address, r.Peer)
	}
	assert.Contains(t, rep.Results[3].Detail, `unknown probe kind "smtp"`)
	assert.Equal(t, 403, rep.Results[4].HTTP.Status)
	// the task's own timeout wins over the plan's
	assert.GreaterOrEqual(t, rep.Results[5].DurationMS, int64(90))
	assert.Less(t, rep.Results[5].DurationMS, int64(250))
}

// TestRunUnixAndFile: the new kinds are in the registry and report their
// path as the peer; the report carries the probe's own ids.
func TestRunUnixAndFile(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	unixListener(t, sock)
	p := Plan{TimeoutMS: 500, Tasks: []Task{
		{ID: "unix", Kind: KindUnix, Path: sock},
		{ID: "unix-missing", Kind: KindUnix, Path: filepath.Join(dir, "none.sock")},
		{ID: "file", Kind: KindFile, Path: sock},
		{ID: "file-missing", Kind: KindFile, Path: filepath.Join(dir, "none.sock")},
	}}
	rep := RunPlan(context.Background(), p)
	assert.Equal(t, os.Getuid(), rep.UID)
	assert.Equal(t, os.Getgid(), rep.GID)
	require.Len(t, rep.Results, 4)
	defer func(u, g func() int) { getuid, getgid = u, g }(getuid, getgid)
	getuid, getgid = func() int { return 1000 }, func() int { return 1001 }
	ids := RunPlan(context.Background(), Plan{})
	assert.Equal(t, 1000, ids.UID, "the report carries the process's ids")
	assert.Equal(t, 1001, ids.GID)
	getuid, getgid = os.Getuid, os.Getgid
	want := []Outcome{Connected, NotFound, Exists, NotFound}
	for i, r := range rep.Results {
		assert.Equal(t, want[i], r.Outcome, "%s: %s", r.ID, r.Detail)
		assert.Equal(t, p.Tasks[i].Path, r.Peer)
	}
	assert.True(t, rep.Results[2].File.Socket)
	assert.True(t, rep.Results[3].File.DirWritable)

	// through Execute and ParseReport, as the host sees it
	plan, err := json.Marshal(p)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Execute(context.Background(), plan, &out))
	parsed, err := ParseReport(&out, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, os.Getuid(), parsed.UID)
	for i, r := range parsed.Results {
		assert.Equal(t, want[i], r.Outcome)
	}
}

func TestRunConcurrent(t *testing.T) {
	silent, _ := udpServer(t, func([]byte) []byte { return nil })
	// 100 tasks of 200 ms each: two rounds under the 64-slot semaphore
	var p Plan
	p.TimeoutMS = 200
	for i := 0; i < 100; i++ {
		p.Tasks = append(p.Tasks, Task{ID: fmt.Sprint(i), Kind: KindUDP, Address: silent})
	}
	start := time.Now()
	rep := RunPlan(context.Background(), p)
	took := time.Since(start)
	assert.Less(t, took, 1500*time.Millisecond, "tasks run concurrently")
	assert.GreaterOrEqual(t, took, 400*time.Millisecond, "at most 64 at once")
	for i, r := range rep.Results {
		assert.Equal(t, fmt.Sprint(i), r.ID)
		assert.Equal(t, Timeout, r.Outcome)
		// the timeout starts once the task holds a slot
		assert.GreaterOrEqual(t, r.DurationMS, int64(190))
	}
}

func TestRunPanicAndEmptyOutcome(t *testing.T) {
	registry["panics"] = func(context.Context, Task) Result { panic("boom") }
	registry["silent"] = func(context.Context, Task) Result { return Result{} }
	t.Cleanup(func() { delete(registry, "panics"); delete(registry, "silent") })
	rep := RunPlan(context.Background(), Plan{Tasks: []Task{{ID: "a", Kind: "panics"}, {ID: "b", Kind: "silent"}}})
	require.Len(t, rep.Results, 2)
	assert.Equal(t, Result{ID: "a", Kind: "panics", Outcome: Error, Detail: "probe panicked: boom", DurationMS: rep.Results[0].DurationMS}, rep.Results[0])
	assert.Equal(t, Error, rep.Results[1].Outcome)
	assert.Equal(t, "b", rep.Results[1].ID)
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	silent, _ := udpServer(t, func([]byte) []byte { return nil })
	rep := RunPlan(ctx, Plan{Tasks: []Task{{ID: "a", Kind: KindUDP, Address: silent}}})
	require.Len(t, rep.Results, 1)
	assert.Equal(t, "a", rep.Results[0].ID)
	assert.NotEqual(t, Connected, rep.Results[0].Outcome)
}

func TestTaskTimeout(t *testing.T) {
	tests := []struct {
		name     string
		task, pl int64
		want     time.Duration
	}{
		{"task wins", 100, 500, 100 * time.Millisecond},
		{"plan default", 0, 500, 500 * time.Millisecond},
		{"built-in default", 0, 0, 3 * time.Second},
		{"negative ignored", -1, -1, 3 * time.Second},
		{"absurd capped", 1 << 62, 0, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, taskTimeout(Task{TimeoutMS: tt.task}, Plan{TimeoutMS: tt.pl}))
		})
	}
}

func TestExecute(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	plan := fmt.Sprintf(`{"timeout_ms":300,"tasks":[{"id":"t1","kind":"tcp","address":%q}]}`, ln.Addr().String())

	var out bytes.Buffer
	require.NoError(t, Execute(context.Background(), []byte(plan), &out))
	assert.Equal(t, 1, strings.Count(out.String(), "\n"), "one JSON document")
	rep, err := ParseReport(&out, 1<<20)
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	assert.Equal(t, Connected, rep.Results[0].Outcome)
	assert.Equal(t, "t1", rep.Results[0].ID)

	out.Reset()
	require.NoError(t, Execute(context.Background(), []byte(`{"timeout_ms":1,"tasks":[]}`), &out))
	assert.JSONEq(t, fmt.Sprintf(`{"version":%q,"uid":%d,"gid":%d,"results":[]}`, Version, os.Getuid(), os.Getgid()), out.String())
}

func TestExecuteRejects(t *testing.T) {
	tests := []struct {
		name, plan, err string
	}{
		{"too large", `{"tasks":[]}` + strings.Repeat(" ", MaxPlanBytes), "more than"},
		{"not json", `tasks`, "not a JSON object"},
		{"array", `[]`, "not a JSON object"},
		{"unknown field", `{"tasks":[{"id":"a","kind":"tcp","adress":"x"}]}`, "unknown field"},
		{"trailing", `{"tasks":[]} {}`, "trailing"},
		{"no id", `{"tasks":[{"kind":"tcp"}]}`, "no id"},
		{"duplicate id", `{"tasks":[{"id":"a","kind":"tcp"},{"id":"a","kind":"udp"}]}`, "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Execute(context.Background(), []byte(tt.plan), &out)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.Zero(t, out.Len(), "no report on a bad plan")
		})
	}
}

// TestReportJSONShape pins the field names the host reads.
func TestReportJSONShape(t *testing.T) {
	b, err := json.Marshal(Report{Version: "v", UID: 1000, GID: 1001, Results: []Result{{ID: "a", Kind: KindHTTP, Outcome: Response,
		HTTP: &HTTPResult{Status: 200, BodySHA256: "x"}}}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"version":"v","uid":1000,"gid":1001,"results":[{"id":"a","kind":"http","outcome":"response","duration_ms":0,
		"http":{"status":200,"body_bytes":0,"truncated":false,"body_sha256":"x"}}]}`, string(b))

	// the new fields, all set
	b, err = json.Marshal(Report{Version: "v", Results: []Result{
		{ID: "h", Kind: KindHTTP, Outcome: Response, Connected: true,
			HTTP: &HTTPResult{Status: 200, BodySHA256: "x", JSONKeys: []string{"diff"}, DiffLike: true}},
		{ID: "f", Kind: KindFile, Outcome: Exists, Peer: "/run/ssebench/admin.sock",
			File: &FileResult{Mode: "Srw-------", Perm: 0o600, Socket: true, UID: 0, GID: 0, DirWritable: false,
				Dir: &FileResult{Mode: "drwx------", Perm: 0o700, UID: 0, GID: 0, DirWritable: true}}},
	}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"version":"v","uid":0,"gid":0,"results":[
		{"id":"h","kind":"http","outcome":"response","duration_ms":0,"connected":true,
		 "http":{"status":200,"body_bytes":0,"truncated":false,"body_sha256":"x","json_keys":["diff"],"diff_like":true}},
		{"id":"f","kind":"file","outcome":"exists","peer":"/run/ssebench/admin.sock","duration_ms":0,
		 "file":{"mode":"Srw-------","perm":384,"socket":true,"uid":0,"gid":0,"dir_writable":false,
		  "dir":{"mode":"drwx------","perm":448,"socket":false,"uid":0,"gid":0,"dir_writable":true}}}]}`, string(b))

	// and the task fields the host sets
	b, err = json.Marshal(Task{ID: "t", Kind: KindUnix, Path: "/p", KeepExcerpt: true, InspectJSON: true})
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"t","kind":"unix","path":"/p","keep_excerpt":true,"inspect_json":true}`, string(b))
}
