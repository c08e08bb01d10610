package docker

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

// Options say how the backend makes its probes.
type Options struct {
	// ProbeImage overrides the probe image built from Binary.
	ProbeImage string
	// ProbeDNS is the upstream resolver of the fresh-run probe (as `docker
	// run --dns`): test worlds set it so that forwarded queries stay on
	// this machine; real audits leave it empty (Docker's default, as a run).
	ProbeDNS string
	// Binary is the tool's own executable, empty for this process's: the
	// probe beside it (or else it) is the probe image's binary and what is
	// copied into runs.
	Binary string
}

// Validate reports a bad option as a one-line error.
func (o Options) Validate() error {
	if o.ProbeDNS != "" && net.ParseIP(o.ProbeDNS) == nil {
		return fmt.Errorf("invalid --probe-dns %q", o.ProbeDNS)
	}
	return nil
}

// Backend audits the Compose deployments of one Docker engine.
type Backend struct {
	api  API
	opts Options
}

var _ checks.Backend = (*Backend)(nil)

// New makes a backend on an engine's API.
func New(api API, opts Options) *Backend { return &Backend{api: api, opts: opts} }

func (b *Backend) Name() string { return "docker" }

func (b *Backend) Engine(ctx context.Context) (checks.Engine, error) {
	v, err := b.api.ServerVersion(ctx)
	if err != nil {
		return checks.Engine{}, err
	}
	return checks.Engine{Version: v.Version, APIVersion: v.APIVersion}, nil
}

// EngineID is the engine's own ID, which the gate's attestation names.
func (b *Backend) EngineID(ctx context.Context) (string, error) {
	info, err := b.api.Info(ctx)
	return info.ID, err
}

// Placement: the fresh-run probe is on the agents network only, with the
// resolver the options give; a live run's probe joins the run's namespace
// and keeps the run's own resolver.
func (b *Backend) Placement(project string, v checks.Vantage) checks.Placement {
	if v.Run != nil {
		return checks.Placement{NetworkMode: "container:" + v.Run.ID}
	}
	return checks.Placement{NetworkMode: checks.AgentsName(project), DNS: b.opts.ProbeDNS}
}

// Leftovers counts probe containers of other audits that are older than any
// live audit could be: what a crashed audit left.
func (b *Backend) Leftovers(ctx context.Context, age time.Duration) int {
	list, err := b.api.ContainerList(ctx, container.ListOptions{All: true, Filters: labelFilter(LabelProbe)})
	if err != nil {
		return 0
	}
	cutoff := time.Now().Add(-age).Unix()
	n := 0
	for _, c := range list {
		if c.Created < cutoff {
			n++
		}
	}
	return n
}

// Start opens one audit's session.
func (b *Backend) Start(auditID string, timeout time.Duration) checks.Session {
	return &session{api: b.api, opts: b.opts, auditID: auditID, timeout: timeout}
}

// FindRun finds the running container of a run ID (the daemon's container
// of a sidecar pair), nil when there is none yet.
func (b *Backend) FindRun(ctx context.Context, project, runID string) (*checks.Container, error) {
	list, err := b.api.ContainerList(ctx, container.ListOptions{Filters: labelFilter(LabelRunID + "=" + runID)})
	if err != nil || len(list) == 0 {
		return nil, err
	}
	ci, err := b.api.ContainerInspect(ctx, list[0].ID)
	if err != nil {
		return nil, err
	}
	c := toContainer(ci)
	return &c, nil
}

// labelFilter filters by labels ("key" or "key=value").
func labelFilter(kv ...string) filters.Args {
	a := filters.NewArgs()
	for _, s := range kv {
		a.Add("label", s)
	}
	return a
}
