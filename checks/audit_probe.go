package checks

import "github.com/ssebench-audit/ssebench-audit/report"

const AuditProbe = "audit.probe"

// auditProbe is the audit's report on itself: a vantage point it could
// not set up, or something it left in a run it could not remove.
var auditProbe = &Check{
	ID:     AuditProbe,
	Title:  "Every vantage point could be set up and probed, and nothing the audit copied into a run was left there",
	From:   FromRuns,
	Remedy: "See the message: the probe could not run, or a copy is left in a run; `ssebench-audit cleanup` removes leftovers.",
	// Discovery failing is reported under it on every backend.
	Backends: []string{BackendDocker, BackendKubernetes},
}

// probeError is the audit.probe row for a vantage point that could not be
// probed.
func probeError(vantage, target, observed, message string, took int64) report.Check {
	return report.Check{ID: AuditProbe, Status: report.Error, Vantage: vantage, Target: target,
		Expected: "probe runs and reports", Observed: observed, Message: message, DurationMS: took}
}
