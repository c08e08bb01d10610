package checks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// Rule names an expectation; what each outcome means under it is data.
type Rule string

const (
	RuleBlocked   Rule = "blocked"    // a connect must not complete
	RuleReached   Rule = "reached"    // positive control: the connect must complete
	RuleResolves  Rule = "resolves"   // positive control: the name must get an address
	RuleNoAddress Rule = "no-address" // an outside name must get no address
	RuleNoAnswer  Rule = "no-answer"  // an outside resolver must not answer at all
	RuleNoTunnel  Rule = "no-tunnel"  // a CONNECT must not be accepted
	RuleNoForward Rule = "no-forward" // an absolute-URI GET must be answered like a local one
)

const (
	pass = report.Pass
	fail = report.Fail
	warn = report.Warn
	inco = report.Inconclusive
)

// outcomeStatus maps, per rule, each probe outcome to a status. An outcome
// missing from a rule's row is an error (the probe did something unplanned).
var outcomeStatus = map[Rule]map[probes.Outcome]report.Status{
	// Closed: the connect completed and the peer hung up: reached.
	RuleBlocked: {probes.Connected: fail, probes.Response: fail, probes.Closed: fail,
		probes.Refused: pass, probes.Unreachable: pass, probes.Timeout: pass},
	RuleReached: {probes.Connected: pass, probes.Response: pass, probes.Closed: pass,
		probes.Refused: inco, probes.Unreachable: inco, probes.Timeout: inco},
	RuleResolves: {probes.Address: pass,
		probes.NoData: inco, probes.NXDomain: inco, probes.ServFail: inco, probes.DNSRefused: inco,
		probes.OtherRcode: inco, probes.Timeout: inco, probes.Refused: inco, probes.Unreachable: inco},
	// NXDOMAIN or NODATA: no address, but the query reached a resolver that
	// knows the outside namespace.
	RuleNoAddress: {probes.Address: fail,
		probes.NXDomain: warn, probes.NoData: warn, probes.OtherRcode: warn,
		probes.ServFail: pass, probes.DNSRefused: pass, probes.Timeout: pass,
		probes.Refused: pass, probes.Unreachable: pass},
	// Any DNS response at all means the query crossed to the resolver.
	RuleNoAnswer: {probes.Address: fail, probes.NoData: fail, probes.NXDomain: fail,
		probes.ServFail: fail, probes.DNSRefused: fail, probes.OtherRcode: fail,
		probes.Timeout: pass, probes.Refused: pass, probes.Unreachable: pass},
}

// judgeTask applies a table rule to one result.
func judgeTask(rule Rule, r probes.Result) report.Status {
	if r.Outcome == probes.Error {
		return report.Error
	}
	if s, ok := outcomeStatus[rule][r.Outcome]; ok {
		return s
	}
	return report.Error
}

// judge evaluates one probe from its results: the worst task status, with
// the evidence of every task.
func judge(p Probe, results []probes.Result) (report.Status, string, string) {
	switch p.Rule {
	case RuleNoTunnel:
		return judgeNoTunnel(results[0])
	case RuleNoForward:
		return judgeNoForward(results[0], results[1])
	case RuleForbidden:
		return judgeForbidden(p.Check, results)
	case RulePublicView:
		return judgePublicView(results)
	}
	worst := report.Pass
	var reached []string
	counts := map[string]int{}
	for i, r := range results {
		s := judgeTask(p.Rule, r)
		if s.Rank() < worst.Rank() {
			worst = s
		}
		ev := describe(p.Tasks[i], r)
		if s != report.Pass || len(results) <= 4 {
			reached = append(reached, ev)
		} else {
			counts[string(r.Outcome)]++
		}
	}
	observed := strings.Join(reached, "; ")
	if len(counts) > 0 {
		var parts []string
		for o, n := range counts {
			parts = append(parts, fmt.Sprintf("%d %s", n, o))
		}
		sort.Strings(parts)
		rest := "others: " + strings.Join(parts, ", ")
		if observed == "" {
			observed = rest
		} else {
			observed += "; " + rest
		}
	}
	return worst, observed, messageFor(p.Rule, worst)
}

func messageFor(rule Rule, s report.Status) string {
	switch {
	case s == report.Fail && rule == RuleBlocked:
		return "reached: an agent has a way out here"
	case s == report.Fail && rule == RuleNoAddress:
		return "an outside name resolved: DNS leaks from the agents network"
	case s == report.Fail && rule == RuleNoAnswer:
		return "an outside resolver answered: DNS traffic leaves the agents network"
	case s == report.Warn && rule == RuleNoAddress:
		return "no address, but the query reached a resolver that knows outside names (a DNS exfiltration channel)"
	case s == report.Inconclusive:
		return "positive control failed: blocked cannot be told from broken"
	case s == report.Error:
		return "the probe could not run"
	}
	return ""
}

func judgeNoTunnel(r probes.Result) (report.Status, string, string) {
	obs := describe(probes.Task{Kind: probes.KindHTTP, Method: "CONNECT"}, r)
	switch {
	case r.Outcome == probes.Error:
		return report.Error, obs, "the probe could not run"
	case r.Outcome == probes.Closed:
		return pass, obs, "the proxy hung up on the CONNECT"
	case r.Outcome != probes.Response || r.HTTP == nil:
		return inco, obs, "the proxy did not answer: blocked cannot be told from broken"
	case r.HTTP.Status >= 200 && r.HTTP.Status < 300:
		return fail, obs, "the proxy opened a tunnel to an internet target"
	}
	return pass, obs, ""
}

// judgeNoForward compares the proxy's answer to an absolute-URI request with
// its answer to the same path in origin form: a server that does not
// forward routes both alike; a forwarding proxy returns the target's answer.
func judgeNoForward(local, absolute probes.Result) (report.Status, string, string) {
	obs := "absolute-URI GET: " + describeHTTP(absolute) + "; local GET: " + describeHTTP(local)
	switch {
	case absolute.Outcome == probes.Error:
		return report.Error, obs, "the probe could not run"
	case absolute.Outcome == probes.Closed:
		return pass, obs, "the proxy hung up on the absolute-URI request"
	case absolute.Outcome != probes.Response || absolute.HTTP == nil:
		return inco, obs, "the proxy did not answer: blocked cannot be told from broken"
	}
	st := absolute.HTTP.Status
	same := local.Outcome == probes.Response && local.HTTP != nil &&
		local.HTTP.Status == st && local.HTTP.BodySHA256 == absolute.HTTP.BodySHA256
	switch {
	case same:
		return pass, obs, ""
	case st >= 200 && st < 400:
		return fail, obs, "the proxy forwarded a request to an internet target"
	case st == 502 || st == 503 || st == 504:
		return warn, obs, "the proxy tried to forward (gateway error): it is a forwarding proxy whose target was unreachable"
	}
	return pass, obs, ""
}

// describe is one task's evidence, short and without bodies.
func describe(t probes.Task, r probes.Result) string {
	switch t.Kind {
	case probes.KindDNS:
		via := t.Address
		if via == "" {
			via = r.Peer
		}
		s := fmt.Sprintf("%s via %s/%s: %s", t.Name, via, transport(t), r.Outcome)
		if len(r.Addresses) > 0 {
			s += " " + strings.Join(r.Addresses, ",")
		}
		return s
	case probes.KindHTTP:
		return describeHTTP(r)
	}
	s := fmt.Sprintf("%s %s: %s", t.Kind, t.Address, r.Outcome)
	if r.Outcome == probes.Error && r.Detail != "" {
		s += " (" + r.Detail + ")"
	}
	return s
}

func transport(t probes.Task) string {
	if t.Transport == "" {
		return "udp"
	}
	return t.Transport
}

func describeHTTP(r probes.Result) string {
	if r.Outcome != probes.Response || r.HTTP == nil {
		if r.Detail != "" {
			return fmt.Sprintf("%s (%s)", r.Outcome, r.Detail)
		}
		return string(r.Outcome)
	}
	return fmt.Sprintf("%d, %d bytes sha256:%.12s", r.HTTP.Status, r.HTTP.BodyBytes, r.HTTP.BodySHA256)
}
