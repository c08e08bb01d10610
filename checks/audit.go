// Package checks is the audit, whatever runs the deployment: the catalogue
// (one file per check: what it proves, how it is planned and judged), the
// vantage points checks are made from, and the verdicts. A Backend finds
// deployments and stands probes in them; this package imports none.
package checks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ssebench-audit/ssebench-audit/report"
)

// NewAuditID makes a short random ID that labels everything one audit makes.
func NewAuditID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Audit audits the configured projects. It returns an error only when no
// audit could run at all (bad settings, engine unreachable, nothing to
// audit); everything else, interruption included, is a result in the report.
func Audit(ctx context.Context, b Backend, cfg Config) (*report.Report, error) {
	rep, _, err := AuditWithEvidence(ctx, b, cfg)
	return rep, err
}

// AuditWithEvidence is Audit with the evidence the gate attests.
func AuditWithEvidence(ctx context.Context, b Backend, cfg Config) (*report.Report, *report.Evidence, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	rep := &report.Report{
		Tool:      report.Tool{Name: "ssebench-audit", Version: cfg.ToolVersion},
		Backend:   b.Name(),
		AuditID:   NewAuditID(),
		StartedAt: time.Now().UTC(),
		Strict:    cfg.Strict,
	}
	eng, err := b.Engine(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrEngine, err)
	}
	rep.Engine = report.Engine{Version: eng.Version, APIVersion: eng.APIVersion}

	projects := cfg.Projects
	if cfg.AllProjects {
		if projects, err = b.Projects(ctx); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrEngine, err)
		}
		if len(projects) == 0 {
			return nil, nil, errors.New("no Compose project with an agents network on this engine")
		}
	}

	// Everything this audit makes carries its ID and is removed on every
	// path, also after Ctrl-C; what could not be is said.
	s := &costed{Session: b.Start(rep.AuditID, cfg.Timeout)}
	defer func() {
		if err := s.Close(ctx, ctx.Err() != nil); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("could not remove everything this audit made (%v): run `ssebench-audit cleanup --audit-id %s`", err, rep.AuditID))
		}
	}()
	if n := b.Leftovers(ctx, 4*cfg.Timeout+5*time.Minute); n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d probe containers of earlier audits are still on this engine: run `ssebench-audit cleanup`", n))
	}

	ev := &report.Evidence{}
	a := &auditor{session: s, backend: b, cfg: cfg, auditID: rep.AuditID, engine: eng, evidence: ev}
	for _, p := range projects {
		checks, families := a.project(ctx, p)
		for i := range checks {
			withRemedy(&checks[i])
		}
		rep.Projects = append(rep.Projects, report.Project{Name: p, Checks: checks, AddressFamilies: families})
	}
	rep.Notes = append(rep.Notes, a.notes...)
	if ctx.Err() != nil {
		rep.Notes = append(rep.Notes, "interrupted: checks that did not complete are reported as errors")
	}
	ev.ProbeImage, ev.ProbeImageID = s.ProbeImage()
	cost := s.snapshot()
	rep.Cost = &cost
	ev.EndedAt = time.Now().UTC()
	rep.DurationMS = ev.EndedAt.Sub(rep.StartedAt).Milliseconds()
	rep.Finalize(ctx.Err() != nil)
	return rep, ev, nil
}

// auditor is one audit under way.
type auditor struct {
	backend Backend
	session Session
	cfg     Config
	auditID string
	engine  Engine

	mu       sync.Mutex
	evidence *report.Evidence
	notes    []string
	// runsOf maps the target of a check on another run, and the vantage
	// of a live run, to that run's container.
	runsOf map[string]string
}

// probedOn lists the probed checks made on a backend.
func probedOn(backend string) []string {
	var out []string
	for _, c := range registry {
		if (c.Plan != nil || c.Inside != nil) && len(c.Backends) > 0 && c.On(backend) {
			out = append(out, c.ID)
		}
	}
	return out
}

// notProbedOn lists the probed checks not made on a backend.
func notProbedOn(backend string) []string {
	var out []string
	for _, c := range registry {
		if (c.Plan != nil || c.Inside != nil) && !c.On(backend) {
			out = append(out, c.ID)
		}
	}
	return out
}

// joinsRuns says whether the backend can stand a probe of its own in a
// live run's network namespace.
func (a *auditor) joinsRuns() bool {
	if j, ok := a.backend.(RunJoiner); ok {
		return j.CanJoinRuns()
	}
	return true
}

// backendProbes says whether the backend can place probes at all.
func (a *auditor) backendProbes() bool {
	if pc, ok := a.backend.(ProbeCapable); ok {
		return pc.CanProbe()
	}
	return true
}

// note keeps an audit-wide remark for the report.
func (a *auditor) note(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, fmt.Sprintf(format, args...))
}

// project makes every check of one project; with Config.RunID, only the
// checks about that one live run (bench's in-flight audit).
func (a *auditor) project(ctx context.Context, project string) ([]report.Check, []string) {
	start := time.Now()
	dep, err := a.backend.Discover(ctx, project)
	if err != nil {
		return []report.Check{{ID: AuditProbe, Status: report.Error, Vantage: VantageHost, Target: project,
			Message: "discovery failed: " + err.Error(), DurationMS: time.Since(start).Milliseconds()}}, nil
	}
	dep.Engine = a.engine
	a.noteNetworks(dep)
	runs := dep.Runs
	scoped := a.cfg.RunID != ""
	if scoped {
		if runs = dep.RunsByID(a.cfg.RunID); len(runs) == 0 {
			return []report.Check{{ID: AuditProbe, Status: report.Error, Vantage: VantageHost, Target: a.cfg.RunID,
				Message: "no live run container with this run ID on the project's networks"}}, nil
		}
	}
	out := a.hostChecks(HostInput{Config: a.cfg, Dep: dep, Runs: runs}, scoped)
	if dep.Cluster != nil && (a.cfg.DeploymentOnly || !a.backendProbes()) {
		// Said in every such report of a cluster, so that a pass is not
		// read as more than it is: a plugin that ignores policies passes
		// the checks from the API.
		a.note("namespace %s: the cluster's objects were judged from its API; no probe stood where a run stands, so whether the network plugin enforces the policies was not checked", project)
		return out, nil
	}
	if dep.Cluster != nil {
		a.note("namespace %s: from a probe pod and by exec into the run pods, this version makes %s; not yet on Kubernetes: %s", project,
			strings.Join(probedOn(BackendKubernetes), ", "), strings.Join(notProbedOn(BackendKubernetes), ", "))
		if dep.Cluster.NodesErr != "" {
			a.note("namespace %s: egress.host probed no node address (%s)", project, dep.Cluster.NodesErr)
		}
	}
	if !dep.Probeable() {
		return out, nil
	}

	in := PlanInput{Config: a.cfg, Dep: dep, Canary: "sba-canary-" + a.auditID + ".example.com",
		HostAddresses: hostAddresses(a.cfg, dep)}
	// The fresh run and every live run are jobs of one bounded pool: the
	// audit costs about one probe, whatever the runs. On internal networks
	// the engine holds the fresh-run probe, which asks outside names through
	// its own embedded DNS, for seconds after it is done, so it goes first
	// and the others wait until it has started: a busy engine otherwise
	// takes seconds to start it (measured: 5-7 s with 20 runs in flight),
	// and its hold then comes on top of everything else.
	var jobs []func() liveRunResult
	headStart := make(chan struct{})
	var once sync.Once
	started := func() { once.Do(func() { close(headStart) }) }
	if !scoped {
		fresh := FreshVantage(dep)
		if ps := plan(in, fresh); len(ps) > 0 {
			jobs = append(jobs, func() liveRunResult {
				defer started()
				return liveRunResult{rows: a.vantage(ctx, project, fresh, ps, nil, started)}
			})
		}
	}
	if len(jobs) == 0 {
		started()
	}
	for _, r := range runs {
		if !r.Running || a.cfg.DeploymentOnly {
			continue
		}
		var v *Vantage
		if dep.Restricted(r) {
			rv := RunVantage(r)
			v = &rv
		}
		jobs = append(jobs, func() liveRunResult { return a.liveRun(ctx, project, in, r, v, !scoped) })
	}
	results := runJobs(ctx, jobs, a.cfg.Workers, headStart)
	for _, r := range results {
		out = append(out, r.rows...)
	}
	out = append(out, a.reach(ctx, project, in, results)...)
	out = a.endedTargets(ctx, project, out)
	return mergeTargets(out), dep.Families()
}

// hostChecks makes the wanted host checks, in catalogue order; an audit of
// one run makes only those about single runs.
func (a *auditor) hostChecks(in HostInput, scoped bool) []report.Check {
	var out []report.Check
	for _, c := range registry {
		if c.Host == nil || !c.On(in.Dep.Backend) || !a.cfg.Wants(c.ID) || (scoped && !c.PerRun) {
			continue
		}
		for _, row := range c.Host(in) {
			row.ID = c.ID
			if row.Vantage == "" {
				row.Vantage = VantageHost
			}
			out = append(out, row)
		}
	}
	return out
}

// noteNetworks records the audited networks as evidence.
func (a *auditor) noteNetworks(d *Deployment) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, n := range []*Network{d.Agents, d.Default} {
		if n != nil {
			a.evidence.Networks = append(a.evidence.Networks, report.NetworkRef{Project: d.Project, Name: n.Name, ID: n.ID, Internal: n.Internal})
		}
	}
}

// hostAddresses are the host's own addresses an agent might reach: the
// user's list, else those the backend could read.
func hostAddresses(cfg Config, d *Deployment) []string {
	if len(cfg.HostAddresses) > 0 {
		return cfg.HostAddresses
	}
	return d.HostAddresses
}

// withRemedy gives a row that needs attention the catalogue's fix, unless
// the check named a fix of its own.
func withRemedy(c *report.Check) {
	if c.Remedy != "" || c.Status == report.Pass || c.Status == report.Skip {
		return
	}
	if ck, ok := Lookup(c.ID); ok {
		c.Remedy = ck.Remedy
	}
}
