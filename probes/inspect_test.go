package probes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const patch = "diff --git a/x.c b/x.c\nindex 1..2 100644\n--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n"

func TestInspectJSON(t *testing.T) {
	patchJSON, err := json.Marshal(map[string]string{"diff": patch})
	require.NoError(t, err)
	tests := []struct {
		name    string
		body    string
		keys    []string
		diff    bool
		valid   bool
		partial bool
	}{
		{"error object", `{"error":"endpoint is only available on the admin socket"}`, []string{"error"}, false, true, false},
		{"nested, sorted, deduplicated", `{"z":1,"a":{"b":{"c":null},"b2":[1,2]},"list":[{"x":1},{"x":2,"y":[{"q":true}]}]}`,
			[]string{"a", "a.b", "a.b.c", "a.b2", "list", "list[].x", "list[].y", "list[].y[].q", "z"}, false, true, false},
		{"top-level array", `[{"a":1},[{"b":2}]]`, []string{"[].a", "[][].b"}, false, true, false},
		{"keys only, never values", `{"k":"secret-value","n":{"m":"secret"}}`, []string{"k", "n", "n.m"}, false, true, false},
		{"reference patch in a string", string(patchJSON), []string{"diff"}, true, true, false},
		{"diff --git alone in a string", `{"p":"diff --git a/b c/d"}`, []string{"p"}, true, true, false},
		{"hunk header alone in a string", `{"p":"x\n@@ -1,2 +1,2 @@"}`, []string{"p"}, true, true, false},
		{"--- then +++ in a string", `{"p":"--- a\r\n+++ b"}`, []string{"p"}, true, true, false},
		{"--- without +++", `{"p":"--- a\nsomething\n+++ b"}`, []string{"p"}, false, true, false},
		{"diff words mid-line", `{"p":"see diff --git and @@ -1 in prose"}`, []string{"p"}, false, true, false},
		{"diff in a key", `{"diff --git a b":1}`, []string{"diff --git a b"}, true, true, false},
		{"raw diff, not JSON", patch, nil, true, false, true},
		{"plain text", "forbidden\n", nil, false, false, true},
		{"scalar", `"just a string"`, nil, false, true, false},
		{"empty object", `{}`, nil, false, true, false},
		{"empty body", ``, nil, false, false, true},
		{"two documents", `{"a":1}{"b":2}`, []string{"a"}, false, false, true},
		{"trailing garbage", `{"a":1} x`, []string{"a"}, false, false, true},
		{"truncated in a key", `{"a":{"bb":1,"cc`, []string{"a", "a.bb"}, false, false, true},
		{"truncated inside the patch string", string(patchJSON[:40]), []string{"diff"}, true, false, true},
		{"truncated right after the colon", `{"other":1,"diff": "diff --git a/x b/x`, []string{"diff", "other"}, true, false, true},
		{"truncated escaped patch, +++ cut", `{"d":"x\n--- a\n+++`, []string{"d"}, false, false, true},
		{"truncated escaped patch, +++ kept", `{"d":"x\n--- a\n+++ b`, []string{"d"}, true, false, true},
		{"control bytes in a key", `{"a\u001b[31m":1}`, []string{"a?[31m"}, false, true, false},
		{"huge number", `{"n":1e999999}`, []string{"n"}, false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := inspectJSON([]byte(tt.body))
			assert.Equal(t, tt.keys, got.Keys)
			assert.Equal(t, tt.diff, got.DiffLike, "diff-like")
			assert.Equal(t, tt.valid, got.Valid, "valid")
			assert.Equal(t, tt.partial, got.Partial, "partial")
			assert.Zero(t, got.Dropped)
		})
	}
}

func TestInspectJSONBounds(t *testing.T) {
	t.Run("at most MaxJSONKeys, shallowest first", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`{"deep":{`)
		for i := 0; i < 300; i++ {
			fmt.Fprintf(&b, `"k%03d":1,`, i)
		}
		b.WriteString(`"last":1},"zz":1}`)
		got := inspectJSON([]byte(b.String()))
		require.Len(t, got.Keys, MaxJSONKeys)
		assert.Contains(t, got.Keys, "zz", "a top-level key is kept over nested ones")
		assert.Contains(t, got.Keys, "deep")
		assert.Equal(t, 303-MaxJSONKeys, got.Dropped)
		assert.True(t, sortedStrings(got.Keys))
	})
	t.Run("long keys cut to MaxJSONKeyBytes on a rune boundary", func(t *testing.T) {
		long := strings.Repeat("é", 200)
		got := inspectJSON([]byte(`{"` + long + `":{"x":1},"a":{"` + long + `":1}}`))
		require.Len(t, got.Keys, 3)
		for _, k := range got.Keys {
			assert.LessOrEqual(t, len(k), MaxJSONKeyBytes)
			assert.True(t, utf8.ValidString(k), "%q", k)
		}
		assert.Contains(t, got.Keys, "a")
	})
	t.Run("invalid UTF-8 in a key stays valid", func(t *testing.T) {
		got := inspectJSON([]byte("{\"a\xff\":1}"))
		require.Len(t, got.Keys, 1)
		assert.True(t, utf8.ValidString(got.Keys[0]))
	})
	t.Run("deep nesting stops the walk, not the diff scan", func(t *testing.T) {
		body := strings.Repeat(`{"a":`, 10000) + `"x\n--- a\n+++ b"` + strings.Repeat(`}`, 10000)
		got := inspectJSON([]byte(body))
		assert.True(t, got.Partial)
		assert.LessOrEqual(t, len(got.Keys), MaxJSONKeys)
		for _, k := range got.Keys {
			assert.LessOrEqual(t, len(k), MaxJSONKeyBytes)
		}
		assert.True(t, got.DiffLike)
	})
	t.Run("deep arrays", func(t *testing.T) {
		body := strings.Repeat(`[`, 1<<20)
		got := inspectJSON([]byte(body))
		assert.True(t, got.Partial)
		assert.Empty(t, got.Keys)
	})
}

func sortedStrings(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}

func TestHasDiffHeader(t *testing.T) {
	for in, want := range map[string]bool{
		patch:                         true,
		"diff --git a b":              true,
		"x\r\ndiff --git a b":         true,
		"@@ -1 +1 @@":                 true,
		"--- a\n+++ b":                true,
		"--- a\r\n+++ b\r\n":          true,
		"--- a\n\n+++ b":              false,
		"+++ b\n--- a":                false,
		" diff --git a b":             false,
		"diff --gitx":                 false,
		"@@ +1 -1 @@":                 false,
		"":                            false,
		"---\n+++":                    false,
		"the --- and +++ of a diff\n": false,
	} {
		assert.Equal(t, want, hasDiffHeader([]byte(in)), "%q", in)
	}
}

func TestLooseTail(t *testing.T) {
	assert.Equal(t, "a\nb\t\"c\\", string(looseTail([]byte(` , : "a\nb\t\"c\\`))))
	assert.Equal(t, `x\`, string(looseTail([]byte(`x\`))), "a cut escape stays")
	assert.Empty(t, looseTail(nil))
}

func FuzzInspectJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":{"b":[{"c":1}]}}`, `{"diff":"diff --git a b\n"}`, `[[[`, `{"a":"--- x\n+++`,
		patch, `{"k":1e999}`, "{\"\xff\":1}", `"\ud800"`, `{"a":1}{"b":2}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := inspectJSON(body)
		require.LessOrEqual(t, len(got.Keys), MaxJSONKeys)
		require.True(t, sortedStrings(got.Keys))
		for _, k := range got.Keys {
			require.LessOrEqual(t, len(k), MaxJSONKeyBytes)
			require.True(t, utf8.ValidString(k))
		}
		if hasDiffHeader(body) {
			require.True(t, got.DiffLike)
		}
		if got.Valid {
			require.True(t, json.Valid(bytes.TrimSpace(body)))
		}
	})
}
