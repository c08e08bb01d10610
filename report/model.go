// Package report holds the one result model of an audit and one renderer per
// output format over it.
package report

import "time"

// Status of one check on one target.
type Status string

const (
	Pass         Status = "pass"
	Fail         Status = "fail"
	Warn         Status = "warn"
	Inconclusive Status = "inconclusive"
	Error        Status = "error"
	Skip         Status = "skip"
)

// Statuses in the order reports list them: failures first.
var Statuses = []Status{Fail, Error, Inconclusive, Warn, Pass, Skip}

// Rank orders statuses for sorting; lower is more urgent.
func (s Status) Rank() int {
	for i, v := range Statuses {
		if v == s {
			return i
		}
	}
	return len(Statuses)
}

// Verdict of a whole audit.
type Verdict string

const (
	VerdictPass         Verdict = "pass"
	VerdictFail         Verdict = "fail"
	VerdictInconclusive Verdict = "inconclusive"
	VerdictError        Verdict = "error"
)

// Exit codes of the contract.
const (
	ExitPass         = 0
	ExitFail         = 1
	ExitError        = 2
	ExitInconclusive = 3
)

// Tool names the program that wrote the report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Engine is the Docker engine that was audited.
type Engine struct {
	Version    string `json:"version"`
	APIVersion string `json:"api_version"`
}

// Check is one check on one target, from one vantage point.
type Check struct {
	ID         string `json:"id"`
	Status     Status `json:"status"`
	Vantage    string `json:"vantage"`
	Target     string `json:"target"`
	Expected   string `json:"expected"`
	Observed   string `json:"observed"`
	Message    string `json:"message"`
	DurationMS int64  `json:"duration_ms"`
	// Vantages lists every vantage point a check of one target was made
	// from, when its rows were folded into one (Vantage is then the one
	// whose finding the row shows). Added field.
	Vantages []string `json:"vantages,omitempty"`
	// Remedy says what to do about a failure or warning; the audit sets it
	// on every row that is not a pass or a skip (added field).
	Remedy string `json:"remedy,omitempty"`
}

// Project is the result for one Compose project.
type Project struct {
	Name   string  `json:"name"`
	Checks []Check `json:"checks"`
	// AddressFamilies says which families the active checks probed
	// ("ipv4", and "ipv6" where the agents network has IPv6). Added field.
	AddressFamilies []string `json:"address_families,omitempty"`
}

// Summary counts checks by status.
type Summary struct {
	Pass         int `json:"pass"`
	Fail         int `json:"fail"`
	Warn         int `json:"warn"`
	Inconclusive int `json:"inconclusive"`
	Error        int `json:"error"`
	Skip         int `json:"skip"`
}

// Report is the whole audit: the JSON contract of the README's "JSON
// report" (and `ssebench-audit schema report`), and the model every
// renderer reads.
type Report struct {
	Tool   Tool   `json:"tool"`
	Engine Engine `json:"engine"`
	// Backend names what ran the deployment ("docker"). Added field.
	Backend    string    `json:"backend,omitempty"`
	AuditID    string    `json:"audit_id,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`
	Verdict    Verdict   `json:"verdict"`
	Summary    Summary   `json:"summary"`
	Projects   []Project `json:"projects"`
	// Notes are audit-wide remarks (leftovers found, interrupted, ...).
	Notes []string `json:"notes,omitempty"`
	// Strict records whether warnings counted as failures.
	Strict bool `json:"strict,omitempty"`
	// Cost is what the audit asked of the engine and of the runs. Added
	// field.
	Cost *Cost `json:"cost,omitempty"`
}

// Cost counts what an audit sent: probes of its own (containers on
// Docker), execs into live runs, and the probe tasks all of them ran.
type Cost struct {
	Probes    int `json:"probes"`
	RunExecs  int `json:"run_execs"`
	TasksSent int `json:"tasks_sent"`
}

// Finalize computes the summary and the verdict from the checks. An
// audit-level error (the engine went away) is passed as fatal.
func (r *Report) Finalize(fatal bool) {
	r.Summary = Summary{}
	for _, p := range r.Projects {
		for _, c := range p.Checks {
			switch c.Status {
			case Pass:
				r.Summary.Pass++
			case Fail:
				r.Summary.Fail++
			case Warn:
				r.Summary.Warn++
			case Inconclusive:
				r.Summary.Inconclusive++
			case Error:
				r.Summary.Error++
			case Skip:
				r.Summary.Skip++
			}
		}
	}
	s := r.Summary
	switch {
	case s.Fail > 0 || (r.Strict && s.Warn > 0):
		// A proven leak is a failure whatever else could not be checked.
		r.Verdict = VerdictFail
	case fatal || s.Error > 0 || s.Total() == s.Skip:
		// Nothing checked proves nothing: a gate never passes on it.
		r.Verdict = VerdictError
	case s.Inconclusive > 0:
		r.Verdict = VerdictInconclusive
	default:
		r.Verdict = VerdictPass
	}
}

// ExitCode maps the verdict to the contract's exit status.
func (r *Report) ExitCode() int {
	switch r.Verdict {
	case VerdictPass:
		return ExitPass
	case VerdictFail:
		return ExitFail
	case VerdictInconclusive:
		return ExitInconclusive
	default:
		return ExitError
	}
}
