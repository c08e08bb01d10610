package checks

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const K8sPolicyEffective = "k8s.policy.effective"

// What ssebench's run policy allows (docs/ssebench.md, "Kubernetes
// backend"), as data: every policy that selects a run pod is judged against
// it, since NetworkPolicies add up and any one of them widens the run.
var (
	// DNS: kube-dns pods in kube-system, UDP and TCP 53.
	k8sDNSNamespace = "kube-system"
	k8sDNSPods      = map[string]string{"k8s-app": "kube-dns"}
	k8sDNSPorts     = []PolicyPort{{Protocol: "UDP", Port: "53"}, {Protocol: "TCP", Port: "53"}}
	// An open run also gets the public IPv4 internet: 0.0.0.0/0 without
	// these blocks (private, shared and link-local: cloud metadata).
	k8sOpenBlock  = "0.0.0.0/0"
	k8sOpenExcept = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"}
)

// k8sNamespaceLabel is set by the API server on every namespace and cannot
// be changed: a namespace selector that asks for it names one namespace.
const k8sNamespaceLabel = "kubernetes.io/metadata.name"

var k8sPolicyEffective = &Check{
	ID:       K8sPolicyEffective,
	Title:    "The union of every NetworkPolicy that selects a run pod allows no more than ssebench's own: kube-dns on 53, the proxy pods on the proxy port (an open run: the public IPv4 internet without private, shared and link-local blocks), and no ingress",
	From:     FromAPI,
	Remedy:   "Delete or narrow the named policy: NetworkPolicies add up, so any policy that selects run pods widens every run it selects (an allow-all egress policy in the runs' namespace gives every run the network).",
	PerRun:   true,
	Backends: []string{BackendKubernetes},
	Host:     func(in HostInput) []report.Check { return perRunPod(in, effectivePolicy) },
}

// effectivePolicy judges the policies that select one run pod, together.
func effectivePolicy(c *Cluster, pod Pod) report.Check {
	open := isOpenRun(c, pod)
	expected := fmt.Sprintf("egress to kube-dns on 53 and to the proxy on TCP %d only; no ingress", c.ProxyPort)
	if open {
		expected = fmt.Sprintf("egress to kube-dns on 53, the proxy on TCP %d and %s except %s only; no ingress",
			c.ProxyPort, k8sOpenBlock, strings.Join(k8sOpenExcept, ", "))
	}
	row := report.Check{Target: pod.Name, Expected: expected, Status: report.Pass}
	var wider []string
	var egress, ingress []string
	for _, p := range c.Selecting(pod) {
		if p.Has("Egress") {
			egress = append(egress, p.Name)
			for _, r := range p.Egress {
				for _, why := range widerEgress(c, p, r, open) {
					wider = append(wider, p.Name+": "+why)
				}
			}
		}
		if p.Has("Ingress") {
			ingress = append(ingress, p.Name)
			for _, r := range p.Ingress {
				wider = append(wider, p.Name+": admits "+ruleString(r))
			}
		}
	}
	if len(egress) == 0 {
		wider = append(wider, "no policy restricts its egress: it reaches every address")
	}
	if len(ingress) == 0 {
		wider = append(wider, "no policy restricts its ingress: every pod reaches its listeners")
	}
	if len(wider) > 0 {
		row.Status = report.Fail
		row.Observed = strings.Join(wider, "; ")
		row.Message = "a policy gives the run more than ssebench allows"
		return row
	}
	kind := "restricted"
	if open {
		kind = "open"
	}
	row.Observed = fmt.Sprintf("%s run; egress from %s, ingress from %s: as ssebench's", kind, strings.Join(egress, ", "), strings.Join(ingress, ", "))
	return row
}

// isOpenRun says whether the run's own policy is ssebench's open one: it
// allows an address block.
func isOpenRun(c *Cluster, pod Pod) bool {
	for _, p := range c.Policies {
		if p.Namespace != pod.Namespace || pod.RunID == "" || p.Labels[k8sLabelRunID] != pod.RunID {
			continue
		}
		for _, r := range p.Egress {
			for _, peer := range r.Peers {
				if peer.IPBlock != nil {
					return true
				}
			}
		}
	}
	return false
}

// widerEgress says how one egress rule of policy p goes beyond what
// ssebench allows a run (open or not); nothing when it does not.
func widerEgress(c *Cluster, p Policy, r PolicyRule, open bool) []string {
	if len(r.Peers) == 0 {
		return []string{"allows every destination on " + portsString(r.Ports)}
	}
	var out []string
	for _, peer := range r.Peers {
		if peer.IPBlock != nil {
			if !open {
				out = append(out, "allows "+peer.String()+" (a restricted run gets no address block)")
			} else if why := widerBlock(*peer.IPBlock); why != "" {
				out = append(out, "allows "+peer.String()+": "+why)
			}
			continue
		}
		allowed, what := allowedPorts(c, p, peer)
		if allowed == nil {
			out = append(out, "allows "+what)
			continue
		}
		if len(r.Ports) == 0 {
			out = append(out, "allows every port of "+what)
			continue
		}
		for _, port := range r.Ports {
			if !portIn(port, allowed) {
				out = append(out, fmt.Sprintf("allows %s on %s", what, port))
			}
		}
	}
	return out
}

// allowedPorts is what ssebench allows to the pods a peer selects: kube-dns
// on 53, the proxy on its port; nil, with what the peer is, for anything else.
func allowedPorts(c *Cluster, p Policy, peer Peer) ([]PolicyPort, string) {
	ns := p.Namespace // a pod selector alone selects in the policy's namespace
	if peer.NamespaceSelector != nil {
		name, ok := oneNamespace(*peer.NamespaceSelector)
		if !ok {
			return nil, "pods of " + peer.String() + " (not one namespace)"
		}
		ns = name
	}
	if peer.PodSelector == nil {
		return nil, "every pod of namespace " + ns
	}
	switch {
	case ns == k8sDNSNamespace && peer.PodSelector.RequiresAll(k8sDNSPods):
		return k8sDNSPorts, "kube-dns"
	case ns == c.ProxyNS() && len(c.ProxySelector) > 0 && peer.PodSelector.RequiresAll(c.ProxySelector):
		return []PolicyPort{{Protocol: "TCP", Port: strconv.Itoa(c.ProxyPort)}}, "the proxy"
	}
	return nil, fmt.Sprintf("pods %s in namespace %s (neither kube-dns nor the proxy)", peer.PodSelector, ns)
}

// oneNamespace is the namespace a selector names by its immutable name label.
func oneNamespace(s Selector) (string, bool) {
	if v, ok := s.MatchLabels[k8sNamespaceLabel]; ok {
		return v, true
	}
	for _, r := range s.Requirements {
		if r.Key == k8sNamespaceLabel && r.Operator == "In" && len(r.Values) == 1 {
			return r.Values[0], true
		}
	}
	return "", false
}

// portIn says whether a rule's port is one ssebench allows (a named port
// or a range is not: ssebench names single port numbers).
func portIn(p PolicyPort, allowed []PolicyPort) bool {
	proto := p.Protocol
	if proto == "" {
		proto = "TCP"
	}
	if p.Port == "" || (p.EndPort != 0 && strconv.Itoa(p.EndPort) != p.Port) {
		return false
	}
	for _, a := range allowed {
		if a.Protocol == proto && a.Port == p.Port {
			return true
		}
	}
	return false
}

// widerBlock says how an open run's address block reaches what ssebench
// keeps out of it; "" when it does not.
func widerBlock(b IPBlock) string {
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil {
		return "not an address block"
	}
	if cidr.Addr().Is6() {
		return "IPv6 (ssebench's open policy is IPv4 only)"
	}
	var except []netip.Prefix
	for _, e := range b.Except {
		if p, err := netip.ParsePrefix(e); err == nil {
			except = append(except, p.Masked())
		}
	}
	var reached []string
	for _, f := range k8sOpenExcept {
		kept := netip.MustParsePrefix(f)
		if !kept.Overlaps(cidr) {
			continue
		}
		part := kept // what of kept the block holds: nested prefixes
		if prefixWithin(cidr.Masked(), kept) {
			part = cidr.Masked()
		}
		covered := false
		for _, e := range except {
			covered = covered || prefixWithin(part, e)
		}
		if !covered {
			reached = append(reached, part.String())
		}
	}
	if len(reached) > 0 {
		return "reaches " + strings.Join(reached, ", ") + " (not excepted)"
	}
	return ""
}

func ruleString(r PolicyRule) string {
	peers := "every source"
	if len(r.Peers) > 0 {
		var ps []string
		for _, p := range r.Peers {
			ps = append(ps, p.String())
		}
		peers = strings.Join(ps, " or ")
	}
	return peers + " on " + portsString(r.Ports)
}

func portsString(ports []PolicyPort) string {
	if len(ports) == 0 {
		return "every port"
	}
	var ps []string
	for _, p := range ports {
		ps = append(ps, p.String())
	}
	return strings.Join(ps, ", ")
}
