package images

import (
	"os"
	"path/filepath"
)

// executablePath is path, or this process's own executable when empty.
func executablePath(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	return os.Executable()
}

// ProbeBinaryName is the probe alone (cmd/ssebench-audit-probe), which
// `make build` puts beside the tool.
const ProbeBinaryName = "ssebench-audit-probe"

// ProbeExecutable is what an audit puts where agents stand: the probe
// binary beside the tool when there is one (a fifth of the tool's size, and
// copied into every live run), else the tool itself, which
// serves `probe` too.
func ProbeExecutable(tool string) (string, error) {
	tool, err := executablePath(tool)
	if err != nil {
		return "", err
	}
	probe := filepath.Join(filepath.Dir(tool), ProbeBinaryName)
	if st, err := os.Stat(probe); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return probe, nil
	}
	return tool, nil
}

// ReadProbeExecutable reads what ProbeExecutable names.
func ReadProbeExecutable(tool string) ([]byte, error) {
	path, err := ProbeExecutable(tool)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
