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
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ParseReport(bytes.NewReader(data), 1<<16)
		if err != nil {
			return
		}
		for _, r := range rep.Results {
			require.NotEmpty(t, r.ID)
			require.True(t, knownOutcomes[r.Outcome])
		}
		// what was accepted survives a round trip
		b, err := json.Marshal(rep)
		require.NoError(t, err)
		again, err := ParseReport(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		require.Equal(t, len(rep.Results), len(again.Results))
	})
}
