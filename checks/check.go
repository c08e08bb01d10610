package checks

import (
	"slices"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// Check is one check of the catalogue, whole: what it proves, from where,
// what to do when it fails, and how it is made. A check is made in at most
// one of three ways: from the backend's API (Host), by probes from fresh
// and live runs (Plan), or from inside live runs (Inside); one made from
// inside may also plan probes for a backend that has no exec into runs.
type Check struct {
	ID     string // stable: CI configs and checklists refer to it
	Title  string // the property that must hold, as a checklist item
	From   From   // where it is checked from
	Remedy string // what to do when it fails or warns
	// Control is the positive control whose failure makes this check's
	// passes inconclusive; empty for controls and non-probe checks.
	Control string
	// PerRun: a host check about single runs, made also in an audit of
	// one run (bench's in-flight audit); the others are about the whole
	// deployment.
	PerRun bool
	// PerTarget: what it finds is a property of its target, not of where
	// it was seen from: one row per target, naming every vantage point.
	PerTarget bool
	// Backends are the backends it is made on; none listed: Docker only,
	// the catalogue's first backend.
	Backends []string

	Host   func(HostInput) []report.Check
	Plan   func(PlanInput) []Planned
	Inside *Inside
	// Reach follows up what Inside found in a run: what other vantage
	// points (the fresh run, and the live runs that sample this one) must
	// probe of it, each judged per vantage.
	Reach func(run Container, d *Deployment, seen InsideResults) []Planned
}

// Backend names, as Backend.Name gives them.
const (
	BackendDocker     = "docker"
	BackendKubernetes = "kubernetes"
)

// On says whether the check is made on the named backend.
func (c *Check) On(backend string) bool {
	if backend == "" {
		backend = BackendDocker // a deployment that does not say is Docker's, as before backends were named
	}
	if len(c.Backends) == 0 {
		return backend == BackendDocker
	}
	return slices.Contains(c.Backends, backend)
}

// backends lists the backends it is made on.
func (c *Check) backends() []string {
	if len(c.Backends) == 0 {
		return []string{BackendDocker}
	}
	return c.Backends
}

// From says where a check is made from, as the catalogue lists it.
type From string

const (
	FromHost        From = "host"
	FromRuns        From = "fresh/live run" // a fresh-run probe and each live run's namespace
	FromFreshRun    From = "fresh run"
	FromInContainer From = "in-container"
	FromBench       From = "host (bench)"
	FromAPI         From = "cluster API" // a Kubernetes API server: objects and the authorizer
)

// HostInput is what a host check judges.
type HostInput struct {
	Config Config
	Dep    *Deployment
	Runs   []Container // the runs in the audit's scope
}

// PlanInput is what an active check plans from.
type PlanInput struct {
	Config        Config
	Dep           *Deployment
	Vantage       Vantage
	Canary        string   // an outside name unique to this audit
	HostAddresses []string // the host's own addresses to probe
}

// Inside is how a check examines a live run from within: named tasks run
// as each agent-side user and as root, in the one exec the audit makes
// into the run, and a judge of what they saw.
type Inside struct {
	AsUsers func(run Container) []probes.Task
	AsRoot  func(run Container) []probes.Task
	Judge   func(run Container, seen InsideResults) []report.Check
}

// InsideResults are what one exec into a run saw for one check.
type InsideResults struct {
	Users []UserResults // the agent first, then the other users the run has
	Root  Results       // empty when root's plan could not run
	// RootErr says why root's plan gave nothing.
	RootErr string
	// Err says why the probe could not run in the run at all.
	Err error
}

// UserResults are one user's results.
type UserResults struct {
	User    string // "1000:1000", or "sse-runner (999:999)"
	Results Results
}
