package checks

import (
	"strings"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const RunEgressRecorded = "run.egress-recorded"

// runEgressRecorded is judged by bench once a run has ended: the egress
// policy a run's summary.json records must be the one the audit saw.
var runEgressRecorded = &Check{
	ID:     RunEgressRecorded,
	Title:  "A finished run's summary.json records the egress policy the audit saw",
	From:   FromBench,
	Remedy: "Investigate the run: its recorded egress policy does not match its network.",
}

// JudgeEgressRecorded compares the egress a run's summary.json records
// (recorded, or why it could not be read) with what the audit saw of the
// run's networks ("" when the run was never seen).
func JudgeEgressRecorded(runID, seen, recorded string, readErr error) report.Check {
	c := report.Check{ID: RunEgressRecorded, Vantage: VantageHost, Target: runID,
		Expected: "config.egress = " + orUnknown(seen) + " (what the audit saw)"}
	switch {
	case readErr != nil:
		c.Status, c.Observed, c.Message = report.Error, readErr.Error(), "no summary.json: the run failed or was interrupted"
	case seen == "":
		c.Status, c.Observed, c.Message = report.Error, "config.egress = "+recorded, "the run's container was never seen: nothing to compare with"
	case recorded != seen:
		c.Status, c.Observed, c.Message = report.Fail, "config.egress = "+recorded, "the results claim another egress policy than the run had"
	default:
		c.Status, c.Observed = report.Pass, "config.egress = "+recorded
	}
	withRemedy(&c)
	return c
}

// EgressOf names the egress policy a run's networks amount to.
func EgressOf(run Container, project string) string {
	nets := run.NetworkNames()
	switch {
	case len(nets) == 1 && nets[0] == AgentsName(project):
		return "restricted"
	case len(nets) == 1 && nets[0] == DefaultName(project):
		return "open"
	}
	return "other (" + strings.Join(nets, ", ") + ")"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
