package checks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// Rule names an expectation that one table decides: what each probe
// outcome means under it is data, below.
type Rule string

const (
	RuleBlocked   Rule = "blocked"    // a connect must not complete
	RuleReached   Rule = "reached"    // positive control: the connect must complete
	RuleResolves  Rule = "resolves"   // positive control: the name must get an address
	RuleNoAddress Rule = "no-address" // an outside name must get no address
	// On a cluster, kube-dns resolving outside names is ssebench's
	// documented state (its policies allow DNS): a warning that names the
	// channel, not a failure.
	RuleClusterDNS Rule = "cluster-dns"
	RuleNoAnswer   Rule = "no-answer" // an outside resolver must not answer at all
	// On a cluster, a service of a node (the kubelet, the API server behind
	// its Service, a node-local DNS cache): NetworkPolicy does not fence a
	// pod from its own node in every plugin (kube-network-policies hooks
	// only forwarded traffic), so an answer is a warning, not a failure.
	RuleOwnNode Rule = "own-node"
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
	RuleClusterDNS: {probes.Address: warn,
		probes.NXDomain: warn, probes.NoData: warn, probes.OtherRcode: warn,
		probes.ServFail: pass, probes.DNSRefused: pass, probes.Timeout: pass,
		probes.Refused: pass, probes.Unreachable: pass},
	RuleOwnNode: {probes.Connected: warn, probes.Response: warn, probes.Closed: warn,
		probes.Refused: pass, probes.Unreachable: pass, probes.Timeout: pass},
	// Any DNS response at all means the query crossed to the resolver.
	RuleNoAnswer: {probes.Address: fail, probes.NoData: fail, probes.NXDomain: fail,
		probes.ServFail: fail, probes.DNSRefused: fail, probes.OtherRcode: fail,
		probes.Timeout: pass, probes.Refused: pass, probes.Unreachable: pass},
}

// ruleMessages say why a status matters, per rule.
var ruleMessages = map[Rule]map[report.Status]string{
	RuleBlocked:    {fail: "reached: an agent has a way out here"},
	RuleNoAddress:  {fail: "an outside name resolved: DNS leaks from the agents network", warn: "no address, but the query reached a resolver that knows outside names (a DNS exfiltration channel)"},
	RuleNoAnswer:   {fail: "an outside resolver answered: DNS traffic leaves the agents network"},
	RuleOwnNode:    {warn: "reached a node's service: the run's policy does not fence it from the node (not every network plugin can), so every agent reaches this service"},
	RuleClusterDNS: {warn: "the cluster's DNS answers outside names, as ssebench's policies allow: a run can send data out in its queries (a DNS exfiltration channel)"},
}

// judgeTask applies a rule's table to one result.
func judgeTask(rule Rule, r probes.Result) report.Status {
	if r.Outcome == probes.Error {
		return report.Error
	}
	if s, ok := outcomeStatus[rule][r.Outcome]; ok {
		return s
	}
	return report.Error
}

// byRule judges every task by one rule: the worst status, with the
// evidence of every task (counted by outcome beyond four passing ones).
func byRule(rule Rule) func(Results) Judgement {
	return func(rs Results) Judgement {
		worst := report.Pass
		var shown []string
		counts := map[string]int{}
		for _, r := range rs {
			s := judgeTask(rule, r.Result)
			if s.Rank() < worst.Rank() {
				worst = s
			}
			if s != report.Pass || len(rs) <= 4 {
				shown = append(shown, describe(r.Task, r.Result))
			} else {
				counts[string(r.Result.Outcome)]++
			}
		}
		observed := strings.Join(shown, "; ")
		if len(counts) > 0 {
			var parts []string
			for o, n := range counts {
				parts = append(parts, fmt.Sprintf("%d %s", n, o))
			}
			sort.Strings(parts)
			observed = strings.TrimPrefix(observed+"; others: "+strings.Join(parts, ", "), "; ")
		}
		return Judgement{Status: worst, Observed: observed, Message: ruleMessage(rule, worst)}
	}
}

func ruleMessage(rule Rule, s report.Status) string {
	switch s {
	case report.Inconclusive:
		return "positive control failed: blocked cannot be told from broken"
	case report.Error:
		return "the probe could not run"
	}
	return ruleMessages[rule][s]
}

// describe is one task's evidence, short and without bodies.
func describe(t probes.Task, r probes.Result) string {
	switch t.Kind {
	case probes.KindDNS:
		via := t.Address
		if via == "" {
			via = r.Peer
		}
		transport := t.Transport
		if transport == "" {
			transport = "udp"
		}
		s := fmt.Sprintf("%s via %s/%s: %s", t.Name, via, transport, r.Outcome)
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

func describeHTTP(r probes.Result) string {
	if r.Outcome != probes.Response || r.HTTP == nil {
		if r.Detail != "" {
			return fmt.Sprintf("%s (%s)", r.Outcome, r.Detail)
		}
		return string(r.Outcome)
	}
	return fmt.Sprintf("%d, %d bytes sha256:%.12s", r.HTTP.Status, r.HTTP.BodyBytes, r.HTTP.BodySHA256)
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
