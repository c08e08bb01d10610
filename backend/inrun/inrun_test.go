package inrun

import (
	"archive/tar"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// The probe and its plans are named after the audit, the command removes
// every one of them, and the probe is the tar's first file (a removal that
// finds no probe may say nothing of the copy landed).
func TestInvocation(t *testing.T) {
	inv, err := New("0123456789ab", []byte("ELF"), checks.InRunWork{Users: []string{"1000:1000"},
		AsRoot: &probes.Plan{TimeoutMS: 1}, Then: true})
	require.NoError(t, err)
	assert.Equal(t, "/.sba-probe-0123456789ab", inv.Self)
	assert.Equal(t, []string{"/.sba-probe-0123456789ab", "/.sba-plan-0123456789ab.json", "/.sba-root-0123456789ab.json"}, inv.Copied)
	assert.Equal(t, []string{"/.sba-probe-0123456789ab", "probe", "--plan", "/.sba-plan-0123456789ab.json",
		"--root-plan", "/.sba-root-0123456789ab.json",
		"--remove", "/.sba-probe-0123456789ab", "--remove", "/.sba-plan-0123456789ab.json", "--remove", "/.sba-root-0123456789ab.json",
		"--as", "1000:1000", "--then-stdin"}, inv.Cmd)

	tr := tar.NewReader(Tar(inv.Files))
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
	}
	assert.Equal(t, []string{".sba-probe-0123456789ab", ".sba-plan-0123456789ab.json", ".sba-root-0123456789ab.json"}, names)

	noRoot, err := New("0123456789ab", nil, checks.InRunWork{})
	require.NoError(t, err)
	assert.NotContains(t, noRoot.Cmd, "--root-plan")
	assert.Len(t, noRoot.Copied, 2)
	assert.Equal(t, []string{"/p", "probe", "--remove", "/a", "--remove", "/p"}, RemoveCmd("/p", []string{"/a", "/p"}))
}
