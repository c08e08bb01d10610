package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

func TestValidate(t *testing.T) {
	ok := Options{Tasks: []string{"t1"}, Agent: "a", Model: "m", Egress: "restricted", SSEBench: []string{"ssebench"},
		Jobs: 1, Audit: checks.Config{Projects: []string{"p"}}}
	assert.NoError(t, ok.Validate())
	for name, mutate := range map[string]func(*Options){
		"no task":       func(o *Options) { o.Tasks = nil },
		"bad task":      func(o *Options) { o.Tasks = []string{"../x"} },
		"no agent":      func(o *Options) { o.Agent = "" },
		"egress":        func(o *Options) { o.Egress = "wide-open" },
		"jobs":          func(o *Options) { o.Jobs = 0 },
		"two projects":  func(o *Options) { o.Audit.Projects = []string{"p", "q"} },
		"all projects":  func(o *Options) { o.Audit.AllProjects = true },
		"empty command": func(o *Options) { o.SSEBench = nil },
	} {
		o := ok
		mutate(&o)
		assert.Error(t, o.Validate(), name)
	}
}

func TestReadTasks(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tasks")
	require.NoError(t, os.WriteFile(f, []byte("# pilot\ncve-1\n\n  cve-2  # flaky\n"), 0o644))
	ts, err := ReadTasks(f)
	require.NoError(t, err)
	assert.Equal(t, []string{"cve-1", "cve-2"}, ts)
}

func TestRunIDAccepted(t *testing.T) {
	for _, task := range []string{"cve-2024-1234", "odd task/with:chars", string(make([]byte, 80))} {
		assert.Regexp(t, runID, newRunID(task), task)
	}
	assert.NotEqual(t, newRunID("t"), newRunID("t"))
}

func TestVerdict(t *testing.T) {
	runs := func(vs ...string) []*RunResult {
		var out []*RunResult
		for _, v := range vs {
			out = append(out, &RunResult{Verdict: v})
		}
		return out
	}
	_, code := verdict(runs(VerdictPass, VerdictPass))
	assert.Equal(t, 0, code)
	_, code = verdict(runs(VerdictPass, VerdictBlocked))
	assert.Equal(t, 1, code)
	_, code = verdict(runs(VerdictError, VerdictFail))
	assert.Equal(t, 1, code, "a failure beats an error")
	_, code = verdict(runs(VerdictPass, VerdictNotStarted))
	assert.Equal(t, 2, code)
}

func TestFindRunDirAndSummary(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "task", "model_x", "agent", "sba-task-1234")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"run_id":"sba-task-1234","config":{"egress":"open"}}`), 0o644))
	assert.Equal(t, dir, findRunDir(root, "sba-task-1234"))
	assert.Equal(t, "", findRunDir(root, "other"))
	s, err := readSummary(dir)
	require.NoError(t, err)
	assert.Equal(t, "open", s.Config.Egress)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{not json`), 0o644))
	_, err = readSummary(dir)
	assert.Error(t, err)
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 8}
	_, _ = tb.Write([]byte("0123456789"))
	_, _ = tb.Write([]byte("ab"))
	assert.Equal(t, "456789ab", tb.String())
}
