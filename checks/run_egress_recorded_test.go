package checks

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssebench-audit/ssebench-audit/report"
)

func TestJudgeEgressRecorded(t *testing.T) {
	assert.Equal(t, report.Pass, JudgeEgressRecorded("r", "restricted", "restricted", nil).Status)
	c := JudgeEgressRecorded("r", "restricted", "open", nil)
	assert.Equal(t, report.Fail, c.Status)
	assert.Equal(t, runEgressRecorded.Remedy, c.Remedy)
	assert.Equal(t, report.Error, JudgeEgressRecorded("r", "restricted", "", errors.New("missing")).Status)
	assert.Equal(t, report.Error, JudgeEgressRecorded("r", "", "restricted", nil).Status, "never seen")
}

func TestEgressOf(t *testing.T) {
	assert.Equal(t, "restricted", EgressOf(runCtr("1", "r", "p_agents"), "p"))
	assert.Equal(t, "open", EgressOf(runCtr("1", "r", "p_default"), "p"))
	assert.Equal(t, "other (p_agents, p_default)", EgressOf(runCtr("1", "r", "p_agents", "p_default"), "p"))
}
