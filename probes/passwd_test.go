package probes

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const samplePasswd = `root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
# a comment
model:x:1000:1000:Agent,,,:/home/model:/bin/bash

sse-runner:x:1001:1002::/home/sse-runner:/usr/sbin/nologin
`

func TestParsePasswd(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int64
		want map[string]PasswdEntry
		err  string
	}{
		{"sample", samplePasswd, 1 << 16, map[string]PasswdEntry{
			"root":       {"root", 0, 0, "/root"},
			"daemon":     {"daemon", 1, 1, "/usr/sbin"},
			"model":      {"model", 1000, 1000, "/home/model"},
			"sse-runner": {"sse-runner", 1001, 1002, "/home/sse-runner"},
		}, ""},
		{"crlf and no final newline", "a:x:5:6::/h:/bin/sh\r\nb:x:7:8::/:", 100, map[string]PasswdEntry{
			"a": {"a", 5, 6, "/h"}, "b": {"b", 7, 8, "/"},
		}, ""},
		{"first entry wins", "u:x:1:1::/a:\nu:x:0:0::/b:\n", 100, map[string]PasswdEntry{"u": {"u", 1, 1, "/a"}}, ""},
		{"malformed lines skipped", strings.Join([]string{
			"short:x:1:1",
			"eight:x:1:1:g:/h:/s:extra",
			":x:1:1::/h:/s",
			"neguid:x:-1:1::/h:/s",
			"plus:x:+1:1::/h:/s",
			"space:x: 1:1::/h:/s",
			"big:x:4294967296:1::/h:/s",
			"hex:x:0x10:1::/h:/s",
			"nogid:x:1:::/h:/s",
			"+nis::::::",
			"-nis:x:1:1::/h:/s",
			"   # indented comment:x:1:1::/h:/s",
			"#commented:x:1:1::/h:/s",
			" #indented:x:1:1::/h:/s",
			"we ird:x:1:1::/h:/s",
			"ok:x:4294967295:0::/h:/s",
		}, "\n"), 1 << 16, map[string]PasswdEntry{"ok": {"ok", 4294967295, 0, "/h"}}, ""},
		{"empty", "", 10, map[string]PasswdEntry{}, ""},
		{"exactly max", "a:x:1:1::/:", 11, map[string]PasswdEntry{"a": {"a", 1, 1, "/"}}, ""},
		{"over max", "a:x:1:1::/:", 10, nil, "more than 10 bytes"},
		{"max zero", samplePasswd, 0, nil, "max must be positive"},
		{"binary", "\x00\xff:\x01:2:3::\n", 100, map[string]PasswdEntry{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePasswd(strings.NewReader(tt.in), tt.max)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParsePasswdReadError(t *testing.T) {
	_, err := ParsePasswd(iotest.ErrReader(errors.New("boom")), 100)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "boom")
}

func FuzzParsePasswd(f *testing.F) {
	for _, s := range []string{
		samplePasswd,
		"a:x:1:1::/:",
		"a:x:1:1::/:\r\n",
		"::::::",
		"a:x:99999999999999999999:1::/:",
		"+::::::",
		"# c\n\n\n",
		"a:x:1:1:g:/h:/s:x",
		"\xff:\x00:1:1::/:",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParsePasswd(bytes.NewReader(data), 1<<12)
		if int64(len(data)) > 1<<12 {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		for name, e := range got {
			require.Equal(t, name, e.Name)
			require.NotEmpty(t, e.Name)
			require.GreaterOrEqual(t, e.UID, 0)
			require.GreaterOrEqual(t, e.GID, 0)
			require.NotContains(t, e.Name, ":")
			require.NotContains(t, e.Home, ":")
			require.NotContains(t, e.Home, "\n")
		}
	})
}
