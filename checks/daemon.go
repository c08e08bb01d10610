package checks

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// daemonRequest is one request the audit sends to a run's daemon on 4263.
type daemonRequest struct {
	Check       string
	Method      string
	Target      string
	Body        string
	Expected    string
	Rule        Rule
	InspectJSON bool
}

// daemonRequests are the only requests the audit ever sends to a daemon it
// did not start; none of them changes the daemon's state (ssebench-facts.md:
// the grading flag makes a current daemon refuse before routing, and an old
// one answers 500 for the unknown tool). safeDaemonRequest guards the list.
var daemonRequests = []daemonRequest{
	{Check: catalogue.DaemonReferencePatch, Method: "GET", Target: "/reference/patch",
		Expected: "403 (admin socket only)", Rule: RuleForbidden},
	{Check: catalogue.DaemonGradingGate, Method: "POST", Target: "/tool/nonexistent?action=x", Body: `{"grading":true}`,
		Expected: "403 (grading checks on the admin socket only)", Rule: RuleForbidden},
	{Check: catalogue.DaemonPublicView, Method: "GET", Target: "/project",
		Expected: "no reference material", Rule: RulePublicView, InspectJSON: true},
}

// versionRequest is evidence: which daemon version answered.
var versionRequest = daemonRequest{Method: "GET", Target: "/version"}

// Rules of the daemon checks.
const (
	RuleForbidden  Rule = "forbidden"   // the daemon must answer 403
	RulePublicView Rule = "public-view" // the public view must carry no reference material
)

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

// daemonTargets are the runs whose daemon a vantage asks: every daemon
// holder on the agents network but the vantage's own run (or pair).
func daemonTargets(d *Deployment, v vantage) []container.InspectResponse {
	var out []container.InspectResponse
	for _, r := range d.Runs {
		if r.State == nil || !r.State.Running || !d.Restricted(r) || r.Config == nil {
			continue
		}
		l := r.Config.Labels
		if l[LabelRunID] == "" && l[LabelWebUI] != "true" {
			continue // a sidecar's agent container holds no daemon
		}
		if v.Run != nil && (v.Run.ID == r.ID || (l[LabelRun] != "" && l[LabelRun] == v.Run.Config.Labels[LabelRun])) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// daemonTimeout bounds a daemon's answer: a healthy daemon answers at once,
// so a longer bound than the blocked-connect timeout costs nothing unless a
// daemon stalls, and keeps a loaded host from reading slowness as a fault.
func daemonTimeout(timeout time.Duration) time.Duration {
	return max(2*timeout, 3*time.Second)
}

// daemonProbes plans the daemon checks of one vantage. The version is asked
// once per daemon, as evidence of the reference-patch check.
func daemonProbes(d *Deployment, v vantage, timeout time.Duration) []Probe {
	var ps []Probe
	for _, r := range daemonTargets(d, v) {
		ep := r.NetworkSettings.Networks[d.Agents.Name]
		if ep == nil || ep.IPAddress == "" {
			continue
		}
		addr := net.JoinHostPort(ep.IPAddress, strconv.Itoa(DaemonPort))
		target := fmt.Sprintf("%s (task %s, container %s) %s", RunName(r), r.Config.Labels[LabelTaskID], ContainerName(r), addr)
		for _, q := range daemonRequests {
			tasks := []probes.Task{q.task(addr, timeout)}
			if q.Check == catalogue.DaemonReferencePatch {
				tasks = append(tasks, versionRequest.task(addr, timeout))
			}
			ps = append(ps, Probe{Check: q.Check, Target: target, Expected: q.Expected, Rule: q.Rule,
				Control: catalogue.ProxyReachable, Tasks: tasks})
		}
	}
	return ps
}

func (q daemonRequest) task(addr string, timeout time.Duration) probes.Task {
	t := probes.Task{Kind: probes.KindHTTP, Address: addr, Method: q.Method, Target: q.Target,
		Body: q.Body, MaxBytes: maxDaemonBody, InspectJSON: q.InspectJSON,
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
func daemonVersion(results []probes.Result) string {
	if len(results) < 2 {
		return ""
	}
	r := results[1]
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

func judgeForbidden(check string, results []probes.Result) (report.Status, string, string) {
	r, ev := results[0], daemonVersion(results)
	switch {
	case notListening(r):
		return pass, withVersion("not reachable on 4263 ("+string(r.Outcome)+")", ev), ""
	case r.Outcome == probes.Response && r.HTTP != nil:
		obs := withVersion(served(r.HTTP), ev)
		st := r.HTTP.Status
		switch {
		case st == 403:
			return pass, obs, ""
		case st >= 200 && st < 300 && check == catalogue.DaemonReferencePatch:
			return fail, obs, "the daemon served the reference patch to another run"
		case st >= 200 && st < 300:
			return fail, obs, "the daemon accepted a grading request on the agent-facing port"
		case st == 500 && check == catalogue.DaemonGradingGate:
			return fail, obs, "no grading gate: the request reached the tool router"
		}
		return warn, obs, fmt.Sprintf("unexpected answer %d, expected 403", st)
	case r.Outcome == probes.Error:
		return report.Error, "probe error: " + r.Detail, "the probe could not run"
	}
	return report.Error, withVersion(fmt.Sprintf("connected, then %s (%s)", r.Outcome, r.Detail), ev),
		"the daemon did not answer within bounds: not judged"
}

func withVersion(obs, version string) string {
	if version == "" {
		return obs
	}
	return obs + "; " + version
}

// referenceKeys are JSON keys that hold reference material.
var referenceKeys = map[string]bool{
	"reference_patch": true, "reference_diff": true, "reference": true, "patch": true,
	"gold_patch": true, "fix_patch": true, "solution": true, "ground_truth": true,
	"hidden_tests": true, "hidden_test": true, "test_patch": true,
}

func judgePublicView(results []probes.Result) (report.Status, string, string) {
	r, ev := results[0], daemonVersion(results)
	switch {
	case notListening(r):
		return pass, withVersion("not reachable on 4263 ("+string(r.Outcome)+")", ev), ""
	case r.Outcome != probes.Response || r.HTTP == nil:
		return report.Error, withVersion(fmt.Sprintf("connected, then %s (%s)", r.Outcome, r.Detail), ev),
			"the daemon did not answer within bounds: not judged"
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
		return fail, obs + "; keys " + strings.Join(found, ", "), "the public view carries reference material"
	case h.DiffLike:
		return fail, obs + "; holds a unified diff", "the public view carries a diff"
	case h.Truncated || r.Detail != "":
		return report.Error, obs + "; " + r.Detail, "the public view did not end within bounds: not judged"
	case h.Status != 200:
		return warn, obs, fmt.Sprintf("unexpected answer %d", h.Status)
	}
	return pass, obs, ""
}

// printable keeps what a container sent short and free of control bytes.
func printable(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= n {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}
