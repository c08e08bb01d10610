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

func TestReadAtMost(t *testing.T) {
	data, err := ReadAtMost(strings.NewReader("12345"), 5)
	require.NoError(t, err, "exactly max is allowed")
	assert.Equal(t, "12345", string(data))

	_, err = ReadAtMost(strings.NewReader("123456"), 5)
	assert.EqualError(t, err, "more than 5 bytes")

	r := strings.NewReader(strings.Repeat("x", 1<<20))
	_, err = ReadAtMost(r, 5)
	assert.Error(t, err)
	assert.Equal(t, int64(1<<20-6), int64(r.Len()), "a peer that talks too much costs max+1 bytes")

	_, err = ReadAtMost(strings.NewReader(""), 0)
	assert.Error(t, err)
}
