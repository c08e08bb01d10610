package checks

import (
	"context"
	"errors"
	"time"

	"github.com/ssebench-audit/ssebench-audit/probes"
)

// ErrEngine marks an audit that could not reach the backend's engine at all.
var ErrEngine = errors.New("cannot reach the engine")

// Backend is where ssebench deployments run (a Docker engine): it finds
// them, and opens audit sessions that stand probes where agents stand.
// Nothing in this package knows how a backend does either.
type Backend interface {
	Name() string
	Engine(ctx context.Context) (Engine, error)
	// Projects lists the deployments the backend holds.
	Projects(ctx context.Context) ([]string, error)
	// Discover finds one deployment as it is now.
	Discover(ctx context.Context, project string) (*Deployment, error)
	// FindRun finds the live container of one run ID, nil when there is none.
	FindRun(ctx context.Context, project, runID string) (*Container, error)
	// Placement says where a probe of the audit's own would stand at v (as
	// `docker run --network` and `--dns` would put it), for plans.
	Placement(project string, v Vantage) Placement
	// Leftovers counts what audits older than age left behind.
	Leftovers(ctx context.Context, age time.Duration) int
	// Start opens one audit's session: everything it makes carries the
	// audit's ID, and Close removes it.
	Start(auditID string, timeout time.Duration) Session
	// Changes follows what happens to a project's networks: a container
	// joining or leaving one (started, stopped, connected, disconnected).
	// The channel closes when ctx ends; a Change with Err set says the
	// stream broke and nothing more will come.
	Changes(ctx context.Context, project string) (<-chan Change, error)
}

// ProbeCapable is a backend that can say it cannot place probes (a
// cluster without a probe image it can pull); a backend without the method
// always can.
type ProbeCapable interface {
	CanProbe() bool
}

// RunJoiner is a backend that can say it cannot stand a probe of its own
// in a live run's network namespace (a cluster: only the exec into the run
// carries the run's network plan); a backend without the method can.
type RunJoiner interface {
	CanJoinRuns() bool
}

// Change is one event that touches a deployment.
type Change struct {
	What      string // "connect" or "disconnect"
	Network   string
	Container string // the container's name, or its ID when it is gone
	RunID     string // its ssebench.run-id, where it has one
	Probe     bool   // one of the audits' own probes
	Err       error
}

// Session is one audit's hold on a backend.
type Session interface {
	// Probe runs plan from v in a probe of the audit's own (a fresh-run
	// probe, or one joined to a live run's network namespace) and returns
	// its report. onStart, when not nil, is called once the probe runs.
	Probe(ctx context.Context, project string, v Vantage, plan probes.Plan, onStart func()) (probes.Report, error)
	// InRun runs work inside a live run, from a copy of the probe that is
	// removed afterwards.
	InRun(ctx context.Context, run Container, work InRunWork) InRunResult
	// ProbeImage names the probe image the session used ("" when none).
	ProbeImage() (ref, id string)
	// Close removes everything the session made, on a context of its own;
	// interrupted says the audit was cut short (creates may still land).
	Close(ctx context.Context, interrupted bool) error
}

// Placement is how a backend stands a probe at a vantage point.
type Placement struct {
	NetworkMode string // as `docker run --network`
	DNS         string // as `docker run --dns`, "" for the default
}

// InRunWork is what one exec into a run carries: a plan run as each
// agent-side user and, as root, a plan of root's own (the run's network
// plan when it rides on this exec, and what only root may examine).
type InRunWork struct {
	Users   []string
	AsUsers probes.Plan
	AsRoot  *probes.Plan
	// Then keeps the probe in the run, its copies in place, for one more
	// plan as root (InRunResult.Then).
	Then bool
}

// InRunResult is what an exec into a run gave back.
type InRunResult struct {
	Report probes.MultiReport
	// Err says why the probe gave no report at all.
	Err error
	// Left lists what the audit copied into the run and could not remove,
	// and RemoveErr why: a finding the user must see.
	Left      []string
	RemoveErr error
	// Then, with InRunWork.Then and a report, is the probe still in the
	// run, waiting for its second plan; nothing is removed before Finish.
	Then Followup
}

// Followup is a probe waiting in a run for one more plan.
type Followup interface {
	// Finish runs plan as root in the run (nil: none) and removes what
	// the audit copied in.
	Finish(ctx context.Context, plan *probes.Plan) FollowupResult
}

// FollowupResult is what the second plan saw, and the removal.
type FollowupResult struct {
	Report    *probes.Report // nil without a plan, or when it could not run
	Err       error
	Left      []string
	RemoveErr error
	// ProbeRemoveErr is why the probe could not remove its copies itself
	// (a second exec then did, unless Left says otherwise).
	ProbeRemoveErr string
}
