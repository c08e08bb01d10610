package checks

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// The daemon checks: every other run's daemon on 4263, asked from where an
// agent stands, must refuse what belongs on its admin socket.
const (
	DaemonReferencePatch = "daemon.reference-patch"
	DaemonGradingGate    = "daemon.grading-gate"
	DaemonPublicView     = "daemon.public-view"
)

var (
	daemonReferencePatch = &Check{
		ID:        DaemonReferencePatch,
		PerTarget: true,
		Title:     "No run's daemon serves the reference patch on port 4263",
		From:      FromRuns,
		Remedy:    "Upgrade the run images to a daemon that serves /reference/patch on the admin socket only; remove kept containers of older versions.",
		Control:   ProxyReachable,
		Backends:  daemonBackends,
		Plan: daemonPlan(daemonRequest{Method: "GET", Target: "/reference/patch", Expected: "403 (admin socket only)",
			withVersion: true, judge: judgeForbidden(DaemonReferencePatch)}),
	}
	daemonGradingGate = &Check{
		ID:        DaemonGradingGate,
		PerTarget: true,
		Title:     "No run's daemon accepts grading requests on port 4263",
		From:      FromRuns,
		Remedy:    "Upgrade the run images to a daemon with the grading gate.",
		Control:   ProxyReachable,
		Backends:  daemonBackends,
		Plan: daemonPlan(daemonRequest{Method: "POST", Target: "/tool/nonexistent?action=x", Body: `{"grading":true}`,
			Expected: "403 (grading checks on the admin socket only)", judge: judgeForbidden(DaemonGradingGate)}),
	}
	daemonPublicView = &Check{
		ID:        DaemonPublicView,
		PerTarget: true,
		Title:     "No run's public project view carries reference material",
		From:      FromRuns,
		Remedy:    "Upgrade the run images; the public view must never include the reference patch or hidden tests.",
		Control:   ProxyReachable,
		Backends:  daemonBackends,
		Plan: daemonPlan(daemonRequest{Method: "GET", Target: "/project", Expected: "no reference material",
			inspectJSON: true, judge: judgePublicView}),
	}
)

// On a cluster every run pod's daemon is asked from the probe pod and from
// inside the restricted run pods that sample it: a run pod's policy admits
// no ingress, so a daemon that answers at all is also an isolation.runs
// failure, and what it answers is judged here as on Docker.
var daemonBackends = []string{BackendDocker, BackendKubernetes}

// daemonRequest is one request the audit sends to a run's daemon on 4263.
// Only the requests of the three checks above and versionRequest are ever
// sent to a daemon the audit did not start, and none of them changes its
// state (docs/ssebench.md: the grading flag makes a current daemon refuse
// before routing, and an old one answers 500 for the unknown tool);
// safeDaemonRequest guards the list.
type daemonRequest struct {
	Method, Target, Body string
	Expected             string
	withVersion          bool // ask /version too, as evidence
	inspectJSON          bool
	judge                func(Results) Judgement
}

// versionRequest is evidence: which daemon version answered.
var versionRequest = daemonRequest{Method: "GET", Target: "/version"}

// maxDaemonBody bounds what the probe reads of a daemon's answer.
const maxDaemonBody = 256 << 10

// safeDaemonRequest says whether a request leaves a daemon's state alone:
// reads, and tool calls refused for their grading flag.
func safeDaemonRequest(method, target, body string) bool {
	path := target
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	switch {
	case method == "GET" || method == "HEAD":
		return true
	case method == "POST" && strings.HasPrefix(path, "/tool/"):
		var b struct {
			Grading bool `json:"grading"`
		}
		return json.Unmarshal([]byte(body), &b) == nil && b.Grading
	}
	return false // /admin/*, /prepare_grading, anything else
}

// daemonPlan plans one daemon request to every daemon the vantage reaches.
func daemonPlan(q daemonRequest) func(PlanInput) []Planned {
	return func(in PlanInput) []Planned {
		var ps []Planned
		for _, r := range daemonTargets(in.Dep, in.Vantage) {
			ip := in.Dep.RunAddress(r)
			if ip == "" {
				continue
			}
			addr := net.JoinHostPort(ip, strconv.Itoa(DaemonPort))
			tasks := []probes.Task{q.task("request", addr, in.Config.Timeout)}
			if q.withVersion {
				tasks = append(tasks, versionRequest.task("version", addr, in.Config.Timeout))
			}
			target := fmt.Sprintf("%s (task %s, container %s) %s", r.RunName(), r.TaskID, r.Name, addr)
			if r.TaskID == "" { // a run pod: no task label
				target = fmt.Sprintf("%s (pod %s) %s", r.RunName(), r.Name, addr)
			}
			ps = append(ps, Planned{Target: target,
				Expected: q.Expected, Tasks: tasks, Judge: q.judge, TargetRun: r.ID})
		}
		return ps
	}
}

// daemonTargets are the runs whose daemon a vantage asks: what a daemon
// answers is its own property, so every daemon is asked from the fresh
// run and from the few live runs that sample it, never from every run.
func daemonTargets(d *Deployment, v Vantage) []Container {
	return v.targets(d, Container.HoldsDaemon)
}

// daemonTimeout bounds a daemon's answer: a healthy daemon answers at once,
// so a longer bound than the blocked-connect timeout costs nothing unless a
// daemon stalls, and keeps a loaded host from reading slowness as a fault.
func daemonTimeout(timeout time.Duration) time.Duration {
	return max(2*timeout, 3*time.Second)
}

func (q daemonRequest) task(name, addr string, timeout time.Duration) probes.Task {
	t := probes.Task{ID: name, Kind: probes.KindHTTP, Address: addr, Method: q.Method, Target: q.Target,
		Body: q.Body, MaxBytes: maxDaemonBody, InspectJSON: q.inspectJSON,
		TimeoutMS: daemonTimeout(timeout).Milliseconds()}
	if q.Body != "" {
		t.Header = map[string]string{"Content-Type": "application/json"}
	}
	if q.Target == versionRequest.Target {
		t.KeepExcerpt = true // {"version": "…"}: evidence, not a secret
	}
	return t
}

// daemonVersion reads the version a daemon reported, as short printable
// text; "" when it was not asked.
func daemonVersion(rs Results) string {
	if !rs.Has("version") {
		return ""
	}
	r := rs.Get("version").Result
	if r.Outcome != probes.Response || r.HTTP == nil {
		return "version unknown (" + string(r.Outcome) + ")"
	}
	var v struct {
		Version string `json:"version"`
	}
	if r.HTTP.Status != 200 || json.Unmarshal([]byte(r.HTTP.Excerpt), &v) != nil || v.Version == "" {
		return fmt.Sprintf("version unknown (GET /version: %d)", r.HTTP.Status)
	}
	return "daemon " + printable(v.Version, 40)
}

// notListening says the daemon could not be reached at all: nothing served.
func notListening(r probes.Result) bool {
	return !r.Connected && (r.Outcome == probes.Refused || r.Outcome == probes.Unreachable || r.Outcome == probes.Timeout)
}

// served describes a body by size and hash only: it may be the answer.
func served(h *probes.HTTPResult) string {
	s := fmt.Sprintf("%d, %d bytes sha256:%s", h.Status, h.BodyBytes, h.BodySHA256)
	if h.Truncated {
		s += " (more not read)"
	}
	return s
}

func withVersion(obs, version string) string {
	if version == "" {
		return obs
	}
	return obs + "; " + version
}

// judgeForbidden: the daemon must answer 403, or not be reachable at all.
func judgeForbidden(check string) func(Results) Judgement {
	return func(rs Results) Judgement {
		r, ev := rs.Get("request").Result, daemonVersion(rs)
		switch {
		case notListening(r):
			return Judgement{pass, withVersion("not reachable on 4263 ("+string(r.Outcome)+")", ev), ""}
		case r.Outcome == probes.Response && r.HTTP != nil:
			obs := withVersion(served(r.HTTP), ev)
			st := r.HTTP.Status
			switch {
			case st == 403:
				return Judgement{pass, obs, ""}
			case st >= 200 && st < 300 && check == DaemonReferencePatch:
				return Judgement{fail, obs, "the daemon served the reference patch to another run"}
			case st >= 200 && st < 300:
				return Judgement{fail, obs, "the daemon accepted a grading request on the agent-facing port"}
			case st == 500 && check == DaemonGradingGate:
				return Judgement{fail, obs, "no grading gate: the request reached the tool router"}
			}
			return Judgement{warn, obs, fmt.Sprintf("unexpected answer %d, expected 403", st)}
		case r.Outcome == probes.Error:
			return Judgement{report.Error, "probe error: " + r.Detail, "the probe could not run"}
		}
		return Judgement{report.Error, withVersion(fmt.Sprintf("connected, then %s (%s)", r.Outcome, r.Detail), ev),
			"the daemon did not answer within bounds: not judged"}
	}
}

// referenceKeys are JSON keys that hold reference material.
var referenceKeys = map[string]bool{
	"reference_patch": true, "reference_diff": true, "reference": true, "patch": true,
	"gold_patch": true, "fix_patch": true, "solution": true, "ground_truth": true,
	"hidden_tests": true, "hidden_test": true, "test_patch": true,
}

func judgePublicView(rs Results) Judgement {
	r, ev := rs.Get("request").Result, daemonVersion(rs)
	switch {
	case notListening(r):
		return Judgement{pass, withVersion("not reachable on 4263 ("+string(r.Outcome)+")", ev), ""}
	case r.Outcome != probes.Response || r.HTTP == nil:
		return Judgement{report.Error, withVersion(fmt.Sprintf("connected, then %s (%s)", r.Outcome, r.Detail), ev),
			"the daemon did not answer within bounds: not judged"}
	}
	h := r.HTTP
	obs := withVersion(served(h), ev)
	var found []string
	for _, k := range h.JSONKeys {
		last := k[strings.LastIndexAny(k, ".")+1:]
		if referenceKeys[strings.TrimSuffix(last, "[]")] {
			found = append(found, printable(k, 60))
		}
	}
	switch {
	case len(found) > 0:
		return Judgement{fail, obs + "; keys " + strings.Join(found, ", "), "the public view carries reference material"}
	case h.DiffLike:
		return Judgement{fail, obs + "; holds a unified diff", "the public view carries a diff"}
	case h.Truncated || r.Detail != "":
		return Judgement{report.Error, obs + "; " + r.Detail, "the public view did not end within bounds: not judged"}
	case h.Status != 200:
		return Judgement{warn, obs, fmt.Sprintf("unexpected answer %d", h.Status)}
	}
	return Judgement{pass, obs, ""}
}
