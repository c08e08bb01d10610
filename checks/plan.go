package checks

import (
	"context"
	"fmt"

	"github.com/ssebench-audit/ssebench-audit/probes"
)

// VantagePlan is what an audit would probe from one vantage point.
type VantagePlan struct {
	Project     string         `json:"project"`
	Vantage     string         `json:"vantage"`
	NetworkMode string         `json:"network_mode"`  // as `docker run --network`
	DNS         string         `json:"dns,omitempty"` // as `docker run --dns`
	Via         string         `json:"via"`           // ViaProbeContainer or ViaRunExec
	Checks      []PlannedCheck `json:"checks"`
}

// How a vantage point's probes would be sent.
const (
	// ViaProbeContainer: a probe container of the audit's own, on the
	// agents network or joined to the run's network namespace.
	ViaProbeContainer = "probe-container"
	// ViaRunExec: the probe the in-container checks exec into the run; if
	// that exec cannot carry the plan (nothing can be copied into the
	// run), a joined probe container takes it over.
	ViaRunExec = "run-exec"
)

// PlannedCheck is one check on one target and the probe tasks behind it.
type PlannedCheck struct {
	ID     string        `json:"id"`
	Target string        `json:"target"`
	Tasks  []probes.Task `json:"tasks"`
}

// Plan says, without probing anything, what an audit of cfg would probe:
// every active check, target and task from every vantage point. It lets a
// user review what the audit sends, and lets a baseline run the same
// checks one container at a time.
func Plan(ctx context.Context, b Backend, cfg Config) ([]VantagePlan, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	projects := cfg.Projects
	if cfg.AllProjects {
		var err error
		if projects, err = b.Projects(ctx); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrEngine, err)
		}
	}
	var out []VantagePlan
	for _, p := range projects {
		dep, err := b.Discover(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrEngine, err)
		}
		if !dep.Probeable() {
			continue
		}
		in := PlanInput{Config: cfg, Dep: dep, Canary: "sba-canary-plan.example.com", HostAddresses: hostAddresses(cfg, dep)}
		vantages := []Vantage{FreshVantage(dep)}
		for _, r := range dep.LiveRuns() {
			if dep.Restricted(r) {
				vantages = append(vantages, RunVantage(r))
			}
		}
		for _, v := range vantages {
			pl := b.Placement(p, v)
			vp := VantagePlan{Project: p, Vantage: v.Name, NetworkMode: pl.NetworkMode, DNS: pl.DNS, Via: ViaProbeContainer}
			if v.Run != nil && cfg.NetworkInExec() {
				vp.Via = ViaRunExec
			}
			for _, pr := range plan(in, v) {
				vp.Checks = append(vp.Checks, PlannedCheck{ID: pr.Check, Target: pr.Target, Tasks: pr.Tasks})
			}
			out = append(out, vp)
		}
	}
	return out, nil
}
