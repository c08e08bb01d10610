package checks

import (
	"net"
	"sort"
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
	return Vantage{Name: VantageFresh, Gateways: d.Agents.Gateways}
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
