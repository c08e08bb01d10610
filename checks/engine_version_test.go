package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssebench-audit/ssebench-audit/report"
)

func TestEngineAffected(t *testing.T) {
	for _, tc := range []struct {
		version          string
		affected, parsed bool
	}{
		{"20.10.24+dfsg1", true, true},
		{"23.0.10", true, true},
		{"23.0.11", false, true},
		{"24.0.9", true, true},
		{"25.0.0", true, true},
		{"25.0.4", true, true},
		{"25.0.5", false, true},
		{"26.0.0", false, true},
		{"28.5.2", false, true},
		{"v27.1", false, true},
		{"master-dockerproject", false, false},
	} {
		a, p := EngineAffected(tc.version)
		assert.Equal(t, tc.affected, a, tc.version)
		assert.Equal(t, tc.parsed, p, tc.version)
	}
	status := func(version string) report.Status {
		return engineVersion.Host(HostInput{Dep: &Deployment{Engine: Engine{Version: version}}})[0].Status
	}
	assert.Equal(t, report.Warn, status("20.10.24"))
	assert.Equal(t, report.Pass, status("28.3.3"))
	assert.Equal(t, report.Warn, status("garbage"))
}
