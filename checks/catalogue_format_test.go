package checks

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "write docs/checks.md from the catalogue")

// docs/checks.md is the catalogue's Markdown: it may not go stale.
func TestDocsCurrent(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCatalogue(&b, "markdown"))
	const path = "../docs/checks.md"
	if *update {
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), b.String(), "docs/checks.md is stale: run `make docs`")
	for _, c := range registry {
		assert.Contains(t, b.String(), "## `"+c.ID+"`")
	}
}

func TestWriteCatalogue(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCatalogue(&b, "json"))
	var entries []catalogueEntry
	require.NoError(t, json.Unmarshal(b.Bytes(), &entries))
	require.Len(t, entries, len(registry))
	assert.Equal(t, EgressHost, entries[12].ID)
	assert.Equal(t, ProxyReachable, entries[12].Control)

	b.Reset()
	require.NoError(t, WriteCatalogue(&b, "table"))
	for _, c := range registry {
		assert.Contains(t, b.String(), c.ID)
	}
	assert.ErrorContains(t, WriteCatalogue(&b, "yaml"), `unknown --format "yaml"`)
	assert.True(t, strings.HasPrefix(anchor("egress.dns-direct"), "egressdns-direct"))
}
