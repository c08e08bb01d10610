package images

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The probe beside the tool is what goes where agents stand; without it,
// the tool itself.
func TestProbeExecutable(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "ssebench-audit")
	require.NoError(t, os.WriteFile(tool, []byte("tool"), 0o755))
	got, err := ProbeExecutable(tool)
	require.NoError(t, err)
	assert.Equal(t, tool, got, "no probe beside the tool")

	probe := filepath.Join(dir, ProbeBinaryName)
	require.NoError(t, os.WriteFile(probe, []byte("probe"), 0o644))
	got, err = ProbeExecutable(tool)
	require.NoError(t, err)
	assert.Equal(t, tool, got, "a probe that cannot run is not taken")

	require.NoError(t, os.Chmod(probe, 0o755))
	got, err = ProbeExecutable(tool)
	require.NoError(t, err)
	assert.Equal(t, probe, got)
	bin, err := ReadProbeExecutable(tool)
	require.NoError(t, err)
	assert.Equal(t, "probe", string(bin))
}
