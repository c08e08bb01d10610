package checks

import (
	"net"
	"sort"
	"strings"
)

// Vantage is where active checks stand: a fresh run (a probe placed as
// `ssebench run --egress restricted` places a run) or a live run's own
// network namespace.
type Vantage struct {
	Name      string     // VantageFresh or "run:<run name>"
	Run       *Container // the live run, nil for the fresh run
	Gateways  []string   // gateways of the networks it is on
	Resolvers []string   // resolvers the run was started with (--dns)
}

// Vantage names of the report (the JSON contract): host, fresh-run,
// run:<run-id>, in-container:<run-id>.
const (
	VantageHost  = "host"
	VantageFresh = "fresh-run"
)

// FreshVantage stands where a new restricted run would: on the agents
// network only.
func FreshVantage(d *Deployment) Vantage {
	v := Vantage{Name: VantageFresh}
	if d.Agents != nil { // a cluster's probe pod has no network of its own to name
		v.Gateways = d.Agents.Gateways
	}
	return v
}

// RunVantage stands in a live run's own network namespace.
func RunVantage(r Container) Vantage {
	v := Vantage{Name: "run:" + r.RunName(), Run: &r}
	for _, ep := range r.Networks {
		v.Gateways = append(v.Gateways, ep.Gateway, ep.IPv6Gateway)
	}
	v.Gateways = uniq(v.Gateways)
	sort.Strings(v.Gateways)
	for _, s := range r.DNS {
		if net.ParseIP(s) != nil {
			v.Resolvers = append(v.Resolvers, s)
		}
	}
	return v
}

// InContainerVantage names the in-container examination of a run.
func InContainerVantage(r Container) string { return "in-container:" + r.RunName() }

// ownRun says whether r is the vantage's own run, or the other container
// of its sidecar pair.
func (v Vantage) ownRun(r Container) bool {
	return v.Run != nil && (v.Run.ID == r.ID || (r.Pair != "" && r.Pair == v.Run.Pair))
}

// PeerSample is how many other runs each live run probes: enough that
// every run is a target of others, few enough that an audit grows with
// the runs, not with their pairs.
const PeerSample = 2

// targets are the runs among those that want(r) that a vantage probes:
// every one from the fresh run; from a live run, the next PeerSample in
// ring order of the live restricted runs (on a cluster, of every live run
// pod) (so every run is a target),
// and every run attached to other networks than the vantage's own (what
// two runs on the same networks reach of each other, a third reaches too;
// runs attached differently are not alike).
func (v Vantage) targets(d *Deployment, want func(Container) bool) []Container {
	var ring []Container
	for _, r := range d.Runs {
		// On a cluster every run pod is on the pod network, an open one too.
		if r.Running && (d.Restricted(r) || d.Cluster != nil) {
			ring = append(ring, r)
		}
	}
	if v.Run == nil {
		var out []Container
		for _, r := range ring {
			if want(r) {
				out = append(out, r)
			}
		}
		return out
	}
	at := -1
	for i, r := range ring {
		if r.ID == v.Run.ID {
			at = i
		}
	}
	own := attachments(*v.Run)
	var out []Container
	sampled := 0
	for k := 1; k < len(ring); k++ {
		r := ring[(at+k+len(ring))%len(ring)]
		if v.ownRun(r) || !want(r) {
			continue
		}
		switch {
		case sampled < PeerSample:
			sampled++
			out = append(out, r)
		case attachments(r) != own:
			out = append(out, r)
		}
	}
	return out
}

// attachments names the networks a container is on, as one key.
func attachments(c Container) string { return strings.Join(c.NetworkNames(), ",") }
