package probes

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLimitWriter(t *testing.T) {
	var b strings.Builder
	w := NewLimitWriter(&b, 5)
	n, err := w.Write([]byte("0123"))
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	n, err = w.Write([]byte("456789"))
	require.NoError(t, err)
	assert.Equal(t, 6, n, "the writer never fails a talkative peer")
	assert.Equal(t, "01234", b.String())
}
