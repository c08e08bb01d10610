// Package checkstest is a fake backend for the audit's unit tests: scripted
// deployments, probes answered as a correct deployment would unless a test
// says otherwise, and a count of everything the audit asked of it.
package checkstest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// Where says from where a task is asked: a probe of the session's own
// (User ""), or inside a run as a user ("0:0" for root).
type Where struct {
	Vantage string // "fresh-run", "run:<id>"; "in-run:<id>" inside a run, "then:<id>" its second plan
	User    string
	run     *checks.Container
}

// Backend is a fake checks.Backend.
type Backend struct {
	mu sync.Mutex

	Deployments map[string]*checks.Deployment
	EngineErr   error
	DiscoverErr error
	// Answer gives a task's result; nil answers as a correct deployment.
	Answer func(w Where, t probes.Task) probes.Result
	// ProbeErr, when set, fails every probe of the session's own (the
	// first ProbeFailures of them, when that is set).
	ProbeErr      error
	ProbeFailures int
	// InRunErr fails the exec into a run; RootErr fails only root's plan.
	InRunErr, RootErr error
	// NotRemoved: the probe in a run could not remove its copies, and
	// RemoveErr: neither could the second exec.
	NotRemoved bool
	RemoveErr  error
	CloseErr   error
	// NewRuns: FindRun starts a run of the run ID it is asked for in the
	// project's deployment, as `ssebench run` would (for bench).
	NewRuns bool

	// What the audits asked.
	Probes   []Where // one per probe of a session's own
	InRuns   []string
	Closed   []bool // one per session closed: interrupted or not
	Sessions int
	Finds    int
	// Asked counts the tasks asked, by "kind target" ("http /reference/patch").
	Asked map[string]int
	// Finished lists the runs whose waiting probe was given its second
	// plan (or none) and removed its copies.
	Finished []string
	// Listeners are what every run listens on; nil: a correct run's.
	Listeners func(run checks.Container) []probes.Listener
	// Events is what Changes streams; a test sends on it.
	Events chan checks.Change
	// ChangesErr fails Changes.
	ChangesErr error
	// OnDiscover, when set, changes what each Discover returns (a copy).
	OnDiscover func(*checks.Deployment)
}

var _ checks.Backend = (*Backend)(nil)

// Locked runs f with the fake's lock held: a test reads what the audits
// asked, or changes the deployments, while they run.
func (b *Backend) Locked(f func() any) any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return f()
}

func (b *Backend) Name() string { return "fake" }

func (b *Backend) Engine(context.Context) (checks.Engine, error) {
	return checks.Engine{Version: "28.5.2", APIVersion: "1.51"}, b.EngineErr
}

func (b *Backend) Projects(context.Context) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ps []string
	for p := range b.Deployments {
		ps = append(ps, p)
	}
	return ps, nil
}

// Discover returns a copy of the project's deployment, a bare one when
// the test gave none.
func (b *Backend) Discover(_ context.Context, project string) (*checks.Deployment, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.DiscoverErr != nil {
		return nil, b.DiscoverErr
	}
	d, ok := b.Deployments[project]
	if !ok {
		return &checks.Deployment{Project: project}, nil
	}
	c := *d
	c.Runs = slices.Clone(d.Runs)
	if d.Agents != nil {
		a := *d.Agents
		a.Members = slices.Clone(d.Agents.Members)
		c.Agents = &a
	}
	if b.OnDiscover != nil {
		b.OnDiscover(&c)
	}
	return &c, nil
}

func (b *Backend) FindRun(_ context.Context, project, runID string) (*checks.Container, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Finds++
	d := b.Deployments[project]
	if d == nil {
		return nil, nil
	}
	for _, r := range d.Runs {
		if r.RunID == runID {
			return &r, nil
		}
	}
	if !b.NewRuns {
		return nil, nil
	}
	r := LiveRun(fmt.Sprintf("%d", 10+len(d.Runs)), runID, project)
	d.Runs = append(d.Runs, r)
	d.Agents.Members = append(d.Agents.Members, checks.Member{ID: r.ID, Name: r.Name, Known: true, Run: true})
	return &r, nil
}

func (b *Backend) Placement(project string, v checks.Vantage) checks.Placement {
	if v.Run != nil {
		return checks.Placement{NetworkMode: "container:" + v.Run.ID}
	}
	return checks.Placement{NetworkMode: checks.AgentsName(project)}
}

func (b *Backend) Leftovers(context.Context, time.Duration) int { return 0 }

// Changes streams what a test sends on Events until ctx ends.
func (b *Backend) Changes(ctx context.Context, _ string) (<-chan checks.Change, error) {
	if b.ChangesErr != nil {
		return nil, b.ChangesErr
	}
	b.mu.Lock()
	if b.Events == nil {
		b.Events = make(chan checks.Change)
	}
	in := b.Events
	b.mu.Unlock()
	out := make(chan checks.Change)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case c, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- c:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

func (b *Backend) Start(auditID string, _ time.Duration) checks.Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Sessions++
	return &session{b: b}
}

type session struct{ b *Backend }

func (s *session) Probe(ctx context.Context, _ string, v checks.Vantage, plan probes.Plan, onStart func()) (probes.Report, error) {
	b := s.b
	b.mu.Lock()
	b.Probes = append(b.Probes, Where{Vantage: v.Name})
	err := b.ProbeErr
	if b.ProbeFailures > 0 && len(b.Probes) > b.ProbeFailures {
		err = nil
	}
	b.mu.Unlock()
	if err != nil {
		return probes.Report{}, err
	}
	if onStart != nil {
		onStart()
	}
	if ctx.Err() != nil {
		return probes.Report{}, ctx.Err()
	}
	return b.answer(Where{Vantage: v.Name}, plan), nil
}

func (s *session) InRun(ctx context.Context, run checks.Container, work checks.InRunWork) checks.InRunResult {
	b := s.b
	b.mu.Lock()
	b.InRuns = append(b.InRuns, run.RunName())
	inRunErr, rootErr, notRemoved, removeErr := b.InRunErr, b.RootErr, b.NotRemoved, b.RemoveErr
	b.mu.Unlock()
	left := func(res checks.InRunResult) checks.InRunResult {
		if removeErr != nil && (res.Err != nil || !res.Report.Removed) {
			res.Left = []string{"/.sba-probe-x", "/.sba-plan-x.json"}
			res.RemoveErr = removeErr
		}
		return res
	}
	if inRunErr != nil {
		return left(checks.InRunResult{Err: inRunErr})
	}
	where := "in-run:" + run.RunName()
	var m probes.MultiReport
	for _, u := range work.Users {
		if u == checks.RunnerUser {
			m.Users = append(m.Users, probes.UserReport{User: u, Error: "no such user"})
			continue
		}
		rep := b.answer(Where{Vantage: where, User: u, run: &run}, work.AsUsers)
		m.Users = append(m.Users, probes.UserReport{User: u, UID: 1000, GID: 1000, Report: &rep})
	}
	if work.AsRoot != nil {
		if rootErr != nil {
			m.RootError = rootErr.Error()
		} else {
			rep := b.answer(Where{Vantage: where, User: "0:0", run: &run}, *work.AsRoot)
			m.Root = &rep
		}
	}
	if work.Then {
		return checks.InRunResult{Report: m, Then: &followup{b: b, run: run}}
	}
	m.Removed = !notRemoved
	if notRemoved {
		m.Error = "remove /.sba-probe-x: read-only file system"
	}
	return left(checks.InRunResult{Report: m})
}

// followup is a probe waiting in a run for its second plan.
type followup struct {
	b   *Backend
	run checks.Container
}

func (f *followup) Finish(_ context.Context, plan *probes.Plan) checks.FollowupResult {
	b := f.b
	b.mu.Lock()
	b.Finished = append(b.Finished, f.run.RunName())
	removeErr, notRemoved := b.RemoveErr, b.NotRemoved
	b.mu.Unlock()
	var res checks.FollowupResult
	if plan != nil {
		rep := b.answer(Where{Vantage: "then:" + f.run.RunName(), User: "0:0"}, *plan)
		res.Report = &rep
	}
	if notRemoved {
		res.ProbeRemoveErr = "remove /.sba-probe-x: read-only file system"
		if removeErr != nil {
			res.Left, res.RemoveErr = []string{"/.sba-probe-x", "/.sba-plan-x.json"}, removeErr
		}
	}
	return res
}

func (s *session) ProbeImage() (string, string) { return "fake-probe:1", "sha256:fake" }

func (s *session) Close(ctx context.Context, interrupted bool) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.Closed = append(s.b.Closed, interrupted)
	return s.b.CloseErr
}

// answer runs a plan against the fake's answers.
func (b *Backend) answer(w Where, plan probes.Plan) probes.Report {
	answer := b.Answer
	if answer == nil {
		answer = Correct
	}
	rep := probes.Report{Version: "test"}
	b.mu.Lock()
	if b.Asked == nil {
		b.Asked = map[string]int{}
	}
	for _, t := range plan.Tasks {
		b.Asked[string(t.Kind)+" "+t.Target]++
	}
	b.mu.Unlock()
	for _, t := range plan.Tasks {
		var r probes.Result
		if t.Kind == probes.KindListeners && w.run != nil {
			r = probes.Result{Outcome: probes.Listed, Listeners: CorrectListeners(*w.run)}
			if b.Listeners != nil {
				r.Listeners = b.Listeners(*w.run)
			}
		} else {
			r = answer(w, t)
		}
		r.ID, r.Kind = t.ID, t.Kind
		rep.Results = append(rep.Results, r)
	}
	return rep
}

// CorrectListeners are what a correct run listens on: the daemon on all
// interfaces, the agent's OpenCode and Docker's resolver on loopback.
func CorrectListeners(checks.Container) []probes.Listener {
	return []probes.Listener{
		{Proto: "udp", Address: "127.0.0.11", Port: 53011, UID: 0},
		{Proto: "tcp", Address: "127.0.0.1", Port: 4096, UID: 1000, Process: "opencode serve (pid 7)"},
		{Proto: "tcp", Address: "0.0.0.0", Port: 4263, UID: 0, Process: "ssebench-daemon (pid 1)"},
	}
}

// ProxyIP is the proxy's address in the deployments Deployment makes.
const ProxyIP = "10.9.0.2"

// Correct answers as a correct deployment on a 20.10 engine: the proxy
// answers and resolves, nothing else does, daemons refuse with 403 and
// the admin socket is root's and hidden from the agent.
func Correct(w Where, t probes.Task) probes.Result {
	switch t.Kind {
	case probes.KindTCP:
		if t.Address == ProxyIP+":4000" {
			return probes.Result{Outcome: probes.Connected}
		}
		return probes.Result{Outcome: probes.Timeout}
	case probes.KindDNS:
		if t.Name == checks.ServiceProxy {
			return probes.Result{Outcome: probes.Address, Addresses: []string{ProxyIP}}
		}
		return probes.Result{Outcome: probes.Timeout}
	case probes.KindHTTP:
		switch {
		case strings.HasPrefix(t.Address, ProxyIP+":"):
			status := 404
			if t.Method == "CONNECT" {
				status = 405
			}
			return probes.Result{Outcome: probes.Response, Connected: true, HTTP: &probes.HTTPResult{Status: status, BodySHA256: "local"}}
		case t.Target == "/version":
			return probes.Result{Outcome: probes.Response, Connected: true, HTTP: &probes.HTTPResult{Status: 200, Excerpt: `{"version":"1.2.0"}`}}
		case t.Target == "/project":
			return probes.Result{Outcome: probes.Response, Connected: true, HTTP: &probes.HTTPResult{Status: 200, BodySHA256: "view",
				JSONKeys: []string{"project", "project.name", "report"}}}
		}
		return probes.Result{Outcome: probes.Response, Connected: true, HTTP: &probes.HTTPResult{Status: 403, BodySHA256: "refused"}}
	case probes.KindFile:
		if !strings.HasSuffix(t.Path, "/run/ssebench/admin.sock") {
			return probes.Result{Outcome: probes.NotFound}
		}
		if w.User != "0:0" {
			return probes.Result{Outcome: probes.Denied, File: &probes.FileResult{UID: -1, Dir: &probes.FileResult{UID: 0, Perm: 0o700}}}
		}
		return probes.Result{Outcome: probes.Exists, File: &probes.FileResult{Mode: "Srw-------", Socket: true, UID: 0, Perm: 0o600,
			Dir: &probes.FileResult{Mode: "drwx------", UID: 0, Perm: 0o700}}}
	case probes.KindUnix:
		if strings.HasSuffix(t.Path, "/run/ssebench/admin.sock") {
			return probes.Result{Outcome: probes.Denied}
		}
		return probes.Result{Outcome: probes.NotFound}
	}
	return probes.Result{Outcome: probes.Error, Detail: "the fake has no answer"}
}

// Deployment is a correct deployment of project with live runs of the
// given run IDs.
func Deployment(project string, runIDs ...string) *checks.Deployment {
	agents := checks.AgentsName(project)
	proxy := checks.Container{ID: "1", Name: project + "-litellm-1", Running: true, Project: project, Service: checks.ServiceProxy,
		Networks: map[string]checks.Endpoint{agents: {IPv4: ProxyIP, Gateway: "10.9.0.1"}}, Hardening: &checks.Hardening{}}
	d := &checks.Deployment{Backend: checks.BackendDocker, Project: project, Proxy: &proxy, HostAddresses: []string{"192.168.99.1"},
		Agents: &checks.Network{Name: agents, ID: "agents-id", Internal: true, Gateways: []string{"10.9.0.1"},
			Members: []checks.Member{{ID: "1", Name: proxy.Name, Address: ProxyIP, Known: true, Project: project, Service: checks.ServiceProxy}}},
		Default: &checks.Network{Name: checks.DefaultName(project), ID: "default-id"}}
	for i, id := range runIDs {
		r := LiveRun(fmt.Sprintf("%d", 2+i), id, project)
		d.Runs = append(d.Runs, r)
		d.Agents.Members = append(d.Agents.Members, checks.Member{ID: r.ID, Name: r.Name, Address: r.Networks[agents].IPv4, Known: true, Run: true})
	}
	return d
}

// LiveRun is a live restricted run of project, as `ssebench run` starts it.
func LiveRun(id, runID, project string) checks.Container {
	return checks.Container{ID: id, Name: "sse-" + runID, Running: true, RunID: runID, TaskID: "task-" + runID,
		Networks:  map[string]checks.Endpoint{checks.AgentsName(project): {IPv4: "10.9.1." + id, Gateway: "10.9.0.1"}},
		Hardening: &checks.Hardening{}}
}
