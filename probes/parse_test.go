package probes

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const validReport = `{"version":"dev","results":[
 {"id":"a","kind":"dns","outcome":"servfail","peer":"127.0.0.11:53","duration_ms":3,"rcode":"SERVFAIL"},
 {"id":"b","kind":"http","outcome":"response","duration_ms":1,"http":{"status":403,"body_bytes":10,"truncated":false,"body_sha256":"00"}},
 {"id":"c","kind":"tcp","outcome":"closed","duration_ms":1}]}
`

// newReport has every field added with the unix and file kinds.
const newReport = `{"version":"dev","uid":1000,"gid":1000,"results":[
 {"id":"h","kind":"http","outcome":"response","duration_ms":1,"connected":true,
  "http":{"status":200,"body_bytes":10,"truncated":true,"body_sha256":"00","json_keys":["diff","a.b[].c"],"diff_like":true}},
 {"id":"t","kind":"http","outcome":"timeout","duration_ms":1,"connected":true},
 {"id":"u","kind":"unix","outcome":"denied","peer":"/run/ssebench/admin.sock","duration_ms":0},
 {"id":"n","kind":"unix","outcome":"not-found","duration_ms":0},
 {"id":"f","kind":"file","outcome":"exists","duration_ms":0,
  "file":{"mode":"Srw-------","perm":384,"socket":true,"uid":0,"gid":0,"dir_writable":false,
   "dir":{"mode":"drwx------","perm":448,"socket":false,"uid":0,"gid":0,"dir_writable":false}}},
 {"id":"m","kind":"file","outcome":"not-found","duration_ms":0,
  "file":{"mode":"","perm":0,"socket":false,"uid":-1,"gid":-1,"dir_writable":true,
   "dir":{"mode":"dtrwxrwxrwx","perm":1023,"socket":false,"uid":0,"gid":0,"dir_writable":false}}}]}
`

func TestParseReport(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		max  int64
		err  string // "" means valid
	}{
		{"valid", validReport, 1 << 20, ""},
		{"exactly max", validReport, int64(len(validReport)), ""},
		{"empty results", `{"version":"x","results":[]}`, 100, ""},
		{"trailing whitespace", `{"version":"x","results":[]}` + " \n\t", 100, ""},
		{"one byte over max", validReport, int64(len(validReport)) - 1, "more than"},
		{"max zero", validReport, 0, "max must be positive"},
		{"trailing garbage", `{"version":"x","results":[]}garbage`, 100, "trailing"},
		{"second document", `{"version":"x","results":[]}{}`, 100, "trailing"},
		{"unknown field", `{"version":"x","results":[],"extra":1}`, 100, "unknown field"},
		{"unknown result field", `{"results":[{"id":"a","outcome":"error","x":1}]}`, 100, "unknown field"},
		{"unknown outcome", `{"results":[{"id":"a","outcome":"maybe"}]}`, 100, "unknown outcome"},
		{"missing outcome", `{"results":[{"id":"a"}]}`, 100, "unknown outcome"},
		{"empty id", `{"results":[{"id":"","outcome":"error"}]}`, 100, "no id"},
		{"missing id", `{"results":[{"outcome":"error"}]}`, 100, "no id"},
		{"null", `null`, 100, "not a JSON object"},
		{"array", `[]`, 100, "not a JSON object"},
		{"empty", ``, 100, "not a JSON object"},
		{"truncated", validReport[:40], 1 << 20, "unexpected EOF"},
		{"wrong type", `{"results":[{"id":1,"outcome":"error"}]}`, 100, "cannot unmarshal"},
		{"unix and file fields", newReport, 1 << 20, ""},
		{"new outcomes", `{"results":[{"id":"a","outcome":"denied"},{"id":"b","outcome":"not-found"},{"id":"c","outcome":"exists"}]}`, 1000, ""},
		{"unknown file field", `{"results":[{"id":"a","outcome":"exists","file":{"mode":"x","owner":"root"}}]}`, 1000, "unknown field"},
		{"nested dir", `{"results":[{"id":"a","outcome":"exists","file":{"dir":{"dir":{}}}}]}`, 1000, "nested dir"},
		{"too many json keys", `{"results":[{"id":"a","outcome":"response","http":{"json_keys":[` + strings.Repeat(`"k",`, MaxJSONKeys) + `"k"]}}]}`, 1 << 20, "json keys, more than"},
		{"exactly MaxJSONKeys", `{"results":[{"id":"a","outcome":"response","http":{"json_keys":[` + strings.Repeat(`"k",`, MaxJSONKeys-1) + `"k"]}}]}`, 1 << 20, ""},
		{"json key too long", `{"results":[{"id":"a","outcome":"response","http":{"json_keys":["` + strings.Repeat("k", MaxJSONKeyBytes+1) + `"]}}]}`, 1 << 20, "a json key of"},
		{"json key at the bound", `{"results":[{"id":"a","outcome":"response","http":{"json_keys":["` + strings.Repeat("k", MaxJSONKeyBytes) + `"]}}]}`, 1 << 20, ""},
		{"uid of the wrong type", `{"uid":"root","results":[]}`, 100, "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := ParseReport(strings.NewReader(tt.doc), tt.max)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Empty(t, rep.Results)
				return
			}
			require.NoError(t, err)
			for _, r := range rep.Results {
				assert.NotEmpty(t, r.ID)
			}
		})
	}
}

func TestParseReportValidContent(t *testing.T) {
	rep, err := ParseReport(strings.NewReader(validReport), 1<<20)
	require.NoError(t, err)
	require.Len(t, rep.Results, 3)
	assert.Equal(t, ServFail, rep.Results[0].Outcome)
	assert.Equal(t, "SERVFAIL", rep.Results[0].Rcode)
	assert.Equal(t, 403, rep.Results[1].HTTP.Status)
	assert.Equal(t, Closed, rep.Results[2].Outcome)

	rep, err = ParseReport(strings.NewReader(newReport), 1<<20)
	require.NoError(t, err)
	assert.Equal(t, 1000, rep.UID)
	assert.Equal(t, 1000, rep.GID)
	require.Len(t, rep.Results, 6)
	h := rep.Results[0]
	assert.True(t, h.Connected)
	assert.Equal(t, []string{"diff", "a.b[].c"}, h.HTTP.JSONKeys)
	assert.True(t, h.HTTP.DiffLike)
	assert.True(t, rep.Results[1].Connected)
	assert.Equal(t, Denied, rep.Results[2].Outcome)
	assert.Equal(t, NotFound, rep.Results[3].Outcome)
	f := rep.Results[4]
	assert.Equal(t, Exists, f.Outcome)
	assert.Equal(t, &FileResult{Mode: "Srw-------", Perm: 0o600, Socket: true,
		Dir: &FileResult{Mode: "drwx------", Perm: 0o700}}, f.File)
	m := rep.Results[5]
	assert.Equal(t, -1, m.File.UID)
	assert.True(t, m.File.DirWritable)
	assert.Equal(t, uint32(0o1777), m.File.Dir.Perm)
}

func FuzzParseReport(f *testing.F) {
	for _, s := range []string{
		validReport,
		`{"version":"x","results":[]}`,
		`{"results":[{"id":"a","outcome":"maybe"}]}`,
		`{"results":[{"id":"","outcome":"error"}]}`,
		`{"version":"x","results":[]}garbage`,
		`{"results":[{"id":"a","outcome":"address","addresses":["1.2.3.4"],"http":null}]}`,
		`{"results":[{"id":"\ud800","outcome":"error","detail":"\xff"}]}`,
		`[[[[[[[[[[`,
		`null`,
		``,
		validReport[:60],
		newReport,
		newReport[:200],
		`{"uid":0,"gid":0,"results":[{"id":"f","outcome":"exists","file":{"mode":"S","perm":4095,"uid":-1,"dir":{"dir":null}}}]}`,
		`{"results":[{"id":"f","outcome":"not-found","file":{"dir":{"dir":{"dir":{}}}}}]}`,
		`{"results":[{"id":"h","outcome":"response","connected":true,"http":{"json_keys":["a","a.b","\u0000"],"diff_like":true}}]}`,
		`{"results":[{"id":"h","outcome":"response","http":{"json_keys":["` + strings.Repeat("\u00e9", 64) + `"]}}]}`,
		`{"results":[{"id":"h","outcome":"response","http":{"json_keys":null,"diff_like":false}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ParseReport(bytes.NewReader(data), 1<<16)
		if err != nil {
			return
		}
		requireValidReport(t, rep)
		// what was accepted survives a round trip
		b, err := json.Marshal(rep)
		require.NoError(t, err)
		again, err := ParseReport(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		require.Equal(t, len(rep.Results), len(again.Results))
		require.Equal(t, rep.UID, again.UID)
	})
}

// requireValidReport holds what ParseReport promises of a report it accepts.
func requireValidReport(t *testing.T, rep Report) {
	t.Helper()
	for _, r := range rep.Results {
		require.NotEmpty(t, r.ID)
		require.True(t, knownOutcomes[r.Outcome])
		if r.HTTP != nil {
			require.LessOrEqual(t, len(r.HTTP.JSONKeys), MaxJSONKeys)
			for _, k := range r.HTTP.JSONKeys {
				require.LessOrEqual(t, len(k), MaxJSONKeyBytes)
			}
		}
		if r.File != nil && r.File.Dir != nil {
			require.Nil(t, r.File.Dir.Dir)
		}
	}
}

// A listeners result is accepted within its bounds, refused beyond them.
func TestParseListeners(t *testing.T) {
	ok := `{"version":"x","uid":0,"gid":0,"results":[{"id":"l","kind":"listeners","outcome":"listed","duration_ms":1,` +
		`"listeners":[{"proto":"tcp","address":"0.0.0.0","port":4096,"uid":1000,"process":"opencode (pid 7)"}]}]}`
	rep, err := ParseReport(strings.NewReader(ok), 1<<20)
	require.NoError(t, err)
	assert.Equal(t, 4096, rep.Results[0].Listeners[0].Port)
	bad := strings.Replace(ok, `"port":4096`, `"port":70000`, 1)
	_, err = ParseReport(strings.NewReader(bad), 1<<20)
	assert.ErrorContains(t, err, "listener out of bounds")
	one := `{"proto":"tcp","address":"0.0.0.0","port":1,"uid":0}`
	many := strings.Replace(ok, `[{"proto":"tcp","address":"0.0.0.0","port":4096,"uid":1000,"process":"opencode (pid 7)"}]`,
		"["+strings.Repeat(one+",", MaxListeners)+one+"]", 1)
	_, err = ParseReport(strings.NewReader(many), 1<<20)
	assert.ErrorContains(t, err, "more than 512")
}
