package checks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/images"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// ErrEngine marks an audit that could not reach the Docker engine at all.
var ErrEngine = errors.New("cannot reach the Docker engine")

// NewAuditID makes a short random ID that labels everything one audit makes.
func NewAuditID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Audit audits the configured projects. It returns an error only when no
// audit could run at all (engine unreachable, nothing to audit); everything
// else, interruption included, is a result in the report.
func Audit(ctx context.Context, api Docker, cfg Config) (*report.Report, error) {
	rep, _, err := Run(ctx, api, cfg)
	return rep, err
}

// Run is Audit with the evidence the gate attests.
func Run(ctx context.Context, api Docker, cfg Config) (*report.Report, *report.Evidence, error) {
	cfg = cfg.WithDefaults()
	rep := &report.Report{
		Tool:      report.Tool{Name: "ssebench-audit", Version: cfg.ToolVersion},
		AuditID:   NewAuditID(),
		StartedAt: time.Now().UTC(),
		Strict:    cfg.Strict,
	}
	v, err := api.ServerVersion(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrEngine, err)
	}
	rep.Engine = report.Engine{Version: v.Version, APIVersion: v.APIVersion}
	ev := &report.Evidence{}

	projects := cfg.Projects
	if cfg.AllProjects {
		if projects, err = Projects(ctx, api); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrEngine, err)
		}
		if len(projects) == 0 {
			return nil, nil, errors.New("no Compose project with an agents network on this engine")
		}
	}

	// Everything this audit creates carries its ID; sweep by it on every
	// path, also after Ctrl-C, in case a create answered after cancellation.
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		settle := time.Duration(0) // every create of a finished audit returned
		if ctx.Err() != nil {
			settle = settleAfterInterrupt
		}
		if _, err := sweep(sctx, api, settle, LabelProbe+"="+rep.AuditID); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("could not remove this audit's probe containers (%v): run `ssebench-audit cleanup --audit-id %s`", err, rep.AuditID))
		}
	}()
	if n := leftovers(ctx, api, cfg.Timeout); n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d probe containers of earlier audits are still on this engine: run `ssebench-audit cleanup`", n))
	}

	a := &auditor{api: api, cfg: cfg, auditID: rep.AuditID, evidence: ev}
	for _, p := range projects {
		checks, families := a.project(ctx, p, v.Version)
		rep.Projects = append(rep.Projects, report.Project{Name: p, Checks: checks, AddressFamilies: families})
	}
	if ctx.Err() != nil {
		rep.Notes = append(rep.Notes, "interrupted: checks that did not complete are reported as errors")
	}
	ev.ProbeImage, ev.ProbeImageID = a.image, a.imageID
	ev.EndedAt = time.Now().UTC()
	rep.DurationMS = ev.EndedAt.Sub(rep.StartedAt).Milliseconds()
	rep.Finalize(ctx.Err() != nil)
	return rep, ev, nil
}

type auditor struct {
	api     Docker
	cfg     Config
	auditID string

	mu       sync.Mutex
	evidence *report.Evidence

	imageOnce sync.Once
	image     string
	imageID   string
	imageErr  error

	binOnce sync.Once
	bin     []byte
	binErr  error
}

// binary is the tool's own executable, read once: what the in-container
// vantage copies into runs.
func (a *auditor) binary() ([]byte, error) {
	a.binOnce.Do(func() { a.bin, a.binErr = readExecutable(a.cfg.Binary) })
	return a.bin, a.binErr
}

// project runs every check of one project; with Config.RunID, only the
// checks about that one live run (bench's in-flight audit).
func (a *auditor) project(ctx context.Context, project, engineVersion string) ([]report.Check, []string) {
	var out []report.Check
	keep := func(cs ...report.Check) {
		for _, c := range cs {
			if a.cfg.Wanted(c.ID) {
				out = append(out, c)
			}
		}
	}
	scoped := a.cfg.RunID != ""
	if !scoped {
		keep(checkEngineVersion(engineVersion))
	}
	start := time.Now()
	dep, err := Discover(ctx, a.api, project)
	if err != nil {
		keep(report.Check{ID: catalogue.AuditProbe, Status: report.Error, Vantage: "host", Target: project,
			Message: "discovery failed: " + err.Error(), DurationMS: time.Since(start).Milliseconds()})
		return out, nil
	}
	a.noteNetworks(dep)
	runs := dep.Runs
	if scoped {
		if runs = dep.RunsByID(a.cfg.RunID); len(runs) == 0 {
			keep(report.Check{ID: catalogue.AuditProbe, Status: report.Error, Vantage: "host", Target: a.cfg.RunID,
				Message: "no live run container with this run ID on the project's networks"})
			return out, nil
		}
		keep(runNetworksChecks(dep, runs)...)
		keep(hardeningChecks(runs)...)
	} else {
		keep(hostChecks(dep)...)
		keep(ipv6IsolationChecks(dep, engineVersion)...)
	}
	if dep.Agents == nil {
		return out, nil
	}

	in := activeInputs{cfg: a.cfg, dep: dep, canary: "sba-canary-" + a.auditID + ".example.com",
		hostAddresses: hostAddresses(a.cfg, dep.IPv6())}
	// The fresh run and every live run are jobs of one bounded pool: the
	// audit costs about one probe, whatever the runs. On internal networks
	// the engine holds the fresh-run probe, which asks outside names through
	// its own embedded DNS, for seconds after it is done, so it goes first
	// and the others wait until it has started: a busy engine otherwise
	// takes seconds to start it (measured: 5-7 s with 20 runs in flight),
	// and its hold then comes on top of everything else.
	var jobs []func() []report.Check
	headStart := make(chan struct{})
	var once sync.Once
	started := func() { once.Do(func() { close(headStart) }) }
	if !scoped {
		fresh := freshVantage(dep)
		if ps := in.plan(fresh); len(ps) > 0 {
			jobs = append(jobs, func() []report.Check {
				defer started()
				return a.vantage(ctx, project, fresh, ps, nil, started)
			})
		}
	}
	if len(jobs) == 0 {
		started()
	}
	for _, r := range runs {
		if r.State == nil || !r.State.Running {
			continue
		}
		var v *vantage
		if dep.Restricted(r) {
			rv := runVantage(r)
			v = &rv
		}
		jobs = append(jobs, func() []report.Check { return a.liveRun(ctx, project, in, r, v) })
	}
	results := runJobs(ctx, jobs, a.cfg.Workers, headStart)
	for _, r := range results {
		out = append(out, r...)
	}
	return out, dep.Families()
}

// runJobs runs jobs on workers goroutines that take them in order, so the
// first job starts first; every other job waits for headStart to close (or
// ctx to end). Results come back in the jobs' order.
func runJobs[T any](ctx context.Context, jobs []func() T, workers int, headStart <-chan struct{}) []T {
	results := make([]T, len(jobs))
	next := make(chan int, len(jobs))
	for i := range jobs {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(max(workers, 1), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				if i > 0 {
					select {
					case <-headStart:
					case <-ctx.Done():
					}
				}
				results[i] = jobs[i]()
			}
		})
	}
	wg.Wait()
	return results
}

// activeVantages: the fresh run (unless only runs are audited) and every
// live restricted run's own namespace.
func activeVantages(dep *Deployment, runs []container.InspectResponse, fresh bool) []vantage {
	var vs []vantage
	if fresh {
		vs = append(vs, freshVantage(dep))
	}
	for _, r := range runs {
		if r.State != nil && r.State.Running && dep.Restricted(r) {
			vs = append(vs, runVantage(r))
		}
	}
	return vs
}

// noteNetworks records the audited networks as evidence.
func (a *auditor) noteNetworks(d *Deployment) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, n := range []*network.Inspect{d.Agents, d.Default} {
		if n != nil {
			a.evidence.Networks = append(a.evidence.Networks, report.NetworkRef{Project: d.Project, Name: n.Name, ID: n.ID, Internal: n.Internal})
		}
	}
}

// vantage judges the plan of one vantage point: from first, the report of
// a probe that already ran it, else from a probe container; what comes out
// inconclusive is probed again from a probe container. onStart, if not nil,
// is called once a probe container has started.
func (a *auditor) vantage(ctx context.Context, project string, v vantage, ps []Probe, first *probes.Report, onStart func()) []report.Check {
	start := time.Now()
	pr := a.prober(project)
	if onStart != nil {
		pr.onStart = onStart
	}
	if v.Run != nil {
		pr.probeDNS = "" // a joined namespace keeps the run's own resolver
	}
	checks, err := judgeWithRetries(v.Name, ps, a.cfg.Retries, func(sub []Probe) (probes.Report, error) {
		if first != nil {
			rep := *first
			first = nil
			return rep, nil
		}
		image, err := a.probeImage(ctx)
		if err != nil {
			return probes.Report{}, err
		}
		pr.image = image
		return pr.run(ctx, v, planOf(sub, a.cfg.Timeout))
	})
	if err != nil {
		checks = []report.Check{{ID: catalogue.AuditProbe, Status: report.Error, Vantage: v.Name,
			Target: "probe container", Expected: "probe runs and reports", Observed: err.Error(),
			Message: "this vantage point could not be probed", DurationMS: time.Since(start).Milliseconds()}}
		for _, p := range ps {
			checks = append(checks, report.Check{ID: p.Check, Status: report.Error, Vantage: v.Name,
				Target: p.Target, Expected: p.Expected, Observed: "not probed", Message: err.Error()})
		}
	}
	return checks
}

// planOf numbers the tasks of probes ("probe.task") into one plan.
func planOf(ps []Probe, timeout time.Duration) probes.Plan {
	plan := probes.Plan{TimeoutMS: timeout.Milliseconds()}
	for i, p := range ps {
		for j, t := range p.Tasks {
			t.ID = fmt.Sprintf("%d.%d", i, j)
			ps[i].Tasks[j] = t
			plan.Tasks = append(plan.Tasks, t)
		}
	}
	return plan
}

// judgeWithRetries probes, judges, and probes again what came out
// inconclusive (with the controls it depends on), up to retries times. Only
// inconclusive results are retried: a target reached once is a failure
// whatever later tries say, and a pass or failure is never re-asked.
func judgeWithRetries(vantageName string, ps []Probe, retries int, run func([]Probe) (probes.Report, error)) ([]report.Check, error) {
	rep, err := run(ps)
	if err != nil {
		return nil, err
	}
	checks := judgeVantage(vantageName, ps, rep)
	for try := 1; try <= retries; try++ {
		var again []int
		controls := map[string]bool{}
		for i, c := range checks {
			if c.Status == report.Inconclusive {
				again = append(again, i)
				controls[ps[i].Control] = true
			}
		}
		if len(again) == 0 {
			break
		}
		// The controls come along, so the retry is judged on its own.
		for i, p := range ps {
			if p.Control == "" && controls[p.Check] && checks[i].Status != report.Inconclusive {
				again = append(again, i)
			}
		}
		sub := make([]Probe, len(again))
		for k, i := range again {
			sub[k] = ps[i]
			sub[k].Tasks = append([]probes.Task(nil), ps[i].Tasks...)
		}
		rep, err := run(sub)
		if err != nil {
			break // keep what the first tries showed
		}
		for k, c := range judgeVantage(vantageName, sub, rep) {
			if i := again[k]; checks[i].Status == report.Inconclusive {
				c.Message = strings.TrimSpace(c.Message + fmt.Sprintf(" (try %d of %d)", try+1, retries+1))
				checks[i] = c
			}
		}
	}
	return checks, nil
}

// judgeVantage turns a probe report into checks, and makes passes of
// checks that depend on a failed positive control inconclusive.
func judgeVantage(vantageName string, ps []Probe, rep probes.Report) []report.Check {
	byID := map[string]probes.Result{}
	for _, r := range rep.Results {
		byID[r.ID] = r
	}
	checks := make([]report.Check, len(ps))
	failedControls := map[string]bool{}
	for i, p := range ps {
		var results []probes.Result
		var took int64
		missing := false
		for _, t := range p.Tasks {
			r, ok := byID[t.ID]
			if !ok {
				missing = true
				r = probes.Result{ID: t.ID, Kind: t.Kind, Outcome: probes.Error, Detail: "no result"}
			}
			if r.DurationMS > took {
				took = r.DurationMS
			}
			results = append(results, r)
		}
		st, obs, msg := judge(p, results)
		if missing {
			st, msg = report.Error, "the probe returned no result for this check"
		}
		checks[i] = report.Check{ID: p.Check, Status: st, Vantage: vantageName, Target: p.Target,
			Expected: p.Expected, Observed: obs, Message: msg, DurationMS: took}
		if p.Control == "" && st != report.Pass {
			failedControls[p.Check] = true
		}
	}
	for i, p := range ps {
		if p.Control != "" && failedControls[p.Control] && checks[i].Status == report.Pass {
			checks[i].Status = report.Inconclusive
			checks[i].Message = "positive control " + p.Control + " failed: blocked cannot be told from broken"
		}
	}
	return checks
}

func (a *auditor) prober(project string) *prober {
	return &prober{api: a.api, auditID: a.auditID, project: project, probeDNS: a.cfg.ProbeDNS, timeout: a.cfg.Timeout,
		onStart: func() {}}
}

func (a *auditor) probeImage(ctx context.Context) (string, error) {
	a.imageOnce.Do(func() {
		if a.cfg.ProbeImage != "" {
			a.image = a.cfg.ProbeImage
			if ii, err := a.api.ImageInspect(ctx, a.image); err == nil {
				a.imageID = ii.ID
			}
			return
		}
		if a.image, _, a.imageErr = EnsureProbeImage(ctx, a.api, a.cfg.Binary); a.imageErr != nil {
			return
		}
		if ii, err := a.api.ImageInspect(ctx, a.image); err == nil {
			a.imageID = ii.ID
		}
	})
	return a.image, a.imageErr
}

// EnsureProbeImage builds the probe image from the tool's executable unless
// an image with its content-hash tag exists.
func EnsureProbeImage(ctx context.Context, api images.Builder, binary string) (string, bool, error) {
	binary, err := executablePath(binary)
	if err != nil {
		return "", false, err
	}
	return images.Ensure(ctx, api, images.Spec{Repo: "ssebench-audit-probe", Dockerfile: images.ProbeDockerfile,
		Binary: binary, Labels: map[string]string{LabelProbe: "image"}})
}

// hostAddresses are the host's own addresses an agent might reach: the
// user's list, else this machine's interface addresses when the engine is
// local (a remote engine's addresses cannot be read from here).
func hostAddresses(cfg Config, ipv6 bool) []string {
	if len(cfg.HostAddresses) > 0 {
		return cfg.HostAddresses
	}
	if h := os.Getenv("DOCKER_HOST"); h != "" && !strings.HasPrefix(h, "unix://") {
		return nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() || (ipn.IP.To4() == nil && !ipv6) {
			continue
		}
		out = append(out, ipn.IP.String())
	}
	return out
}

// leftovers counts probe containers of other audits that are older than any
// live audit could be: what a crashed audit left.
func leftovers(ctx context.Context, api Docker, timeout time.Duration) int {
	list, err := api.ContainerList(ctx, container.ListOptions{All: true, Filters: listFilter(LabelProbe)})
	if err != nil {
		return 0
	}
	cutoff := time.Now().Add(-(4*timeout + 5*time.Minute)).Unix()
	n := 0
	for _, c := range list {
		if c.Created < cutoff {
			n++
		}
	}
	return n
}
