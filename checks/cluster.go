package checks

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/report"
)

// Cluster is what a Kubernetes backend found of one ssebench deployment:
// the runs' namespace, its run pods and every NetworkPolicy that can
// select them or the proxy, in terms the k8s.* checks judge without
// knowing client-go (docs/ssebench.md, "Kubernetes backend").
type Cluster struct {
	Namespace      string            // the runs' namespace
	ProxyNamespace string            // where the LiteLLM proxy runs
	ProxySelector  map[string]string // the proxy pods' labels, as the run policies select them
	ProxyPort      int               // the port the run policies allow to the proxy
	RunPods        []Pod
	ProxyPods      []Pod
	DatabasePods   []Pod
	// Policies are the NetworkPolicies of the runs' and the proxy's
	// namespaces.
	Policies []Policy
	// Nodes are the cluster's nodes, and NodesErr why they could not be
	// listed: a run pod must not reach their services (egress.host).
	Nodes    []Node
	NodesErr string
	// APIServer is where pods reach the API server (the kubernetes
	// Service's ClusterIP:port), "" when it could not be read.
	APIServer string
	// Access is what each run pod's service account may do ("ns/name"),
	// one answer per question asked of the API server's authorizer.
	Access map[string][]Access
	// AccessErr says why Access could not be asked.
	AccessErr string
}

// Node is one node of the cluster, with its addresses (internal and
// external).
type Node struct {
	Name      string
	Addresses []string
}

// TokenInRuns says whether any run pod holds a service-account token.
func (c *Cluster) TokenInRuns() bool {
	for _, p := range c.RunPods {
		if p.TokenMounted {
			return true
		}
	}
	return false
}

// Pod is one pod, with what hardening judges.
type Pod struct {
	Name           string
	Namespace      string
	Labels         map[string]string
	RunID          string   // its ssebench.run-id label
	IPs            []string // its addresses in the pod network (none before it is placed)
	Phase          string
	ServiceAccount string
	// TokenMounted: a service-account token reaches the pod (the pod or
	// its service account does not turn the automount off, or a projected
	// token volume is mounted).
	TokenMounted bool
	ServiceLinks bool
	HostNetwork  bool
	HostPID      bool
	HostIPC      bool
	Seccomp      string   // the pod's seccomp profile type, "" when unset
	HostPaths    []string // hostPath volumes
	Containers   []PodContainer
}

// PodContainer is one container of a pod (init containers included).
type PodContainer struct {
	Name                     string
	Privileged               bool
	AllowPrivilegeEscalation *bool // nil: the runtime's default, which allows it
	CapAdd                   []string
	CapDrop                  []string
	ReadOnlyRoot             bool
	Seccomp                  string // "" when unset (the pod's applies)
}

// Policy is one NetworkPolicy.
type Policy struct {
	Name        string
	Namespace   string
	Labels      map[string]string
	PodSelector Selector
	Types       []string // "Ingress", "Egress"
	Ingress     []PolicyRule
	Egress      []PolicyRule
}

// PolicyRule is one rule: traffic to (or from) any of Peers on any of
// Ports. No peers is every peer; no ports is every port.
type PolicyRule struct {
	Peers []Peer
	Ports []PolicyPort
}

// Peer is one `to`/`from` entry: a pod and namespace selector pair, or an
// address block.
type Peer struct {
	PodSelector       *Selector
	NamespaceSelector *Selector
	IPBlock           *IPBlock
}

// IPBlock is an address block and what it leaves out.
type IPBlock struct {
	CIDR   string
	Except []string
}

// PolicyPort is one port entry: Port is a number or a port name, "" for
// every port of the protocol; EndPort closes a range.
type PolicyPort struct {
	Protocol string // TCP, UDP or SCTP
	Port     string
	EndPort  int
}

// Selector is a label selector: every label of MatchLabels and every
// requirement must hold; an empty selector selects everything.
type Selector struct {
	MatchLabels  map[string]string
	Requirements []Requirement
}

// Requirement is one matchExpressions entry.
type Requirement struct {
	Key      string
	Operator string // In, NotIn, Exists, DoesNotExist
	Values   []string
}

// Access is one answer of the authorizer about a service account.
type Access struct {
	Verb     string
	Resource string // "pods", "pods/exec", "secrets", …
	Allowed  bool
}

// perRunPod makes one row per run pod of a cluster's deployment (nothing
// on other backends): the shape of the k8s.* checks about runs.
func perRunPod(in HostInput, row func(c *Cluster, pod Pod) report.Check) []report.Check {
	c := in.Dep.Cluster
	if c == nil {
		return nil
	}
	out := make([]report.Check, 0, len(c.RunPods))
	for _, pod := range c.RunPods {
		out = append(out, row(c, pod))
	}
	return out
}

// Matches says whether the selector selects an object with these labels.
func (s Selector) Matches(labels map[string]string) bool {
	for k, v := range s.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, r := range s.Requirements {
		v, ok := labels[r.Key]
		switch r.Operator {
		case "In":
			if !ok || !slices.Contains(r.Values, v) {
				return false
			}
		case "NotIn":
			if ok && slices.Contains(r.Values, v) {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		default:
			return false // an operator the API server would refuse
		}
	}
	return true
}

// Requires says whether every object the selector selects has label k=v:
// what makes a selector no wider than one that asks for k=v.
func (s Selector) Requires(k, v string) bool {
	if got, ok := s.MatchLabels[k]; ok && got == v {
		return true
	}
	for _, r := range s.Requirements {
		if r.Key == k && r.Operator == "In" && len(r.Values) == 1 && r.Values[0] == v {
			return true
		}
	}
	return false
}

// RequiresAll says whether the selector requires every label of want.
func (s Selector) RequiresAll(want map[string]string) bool {
	for k, v := range want {
		if !s.Requires(k, v) {
			return false
		}
	}
	return true
}

func (s Selector) String() string {
	var parts []string
	for k, v := range s.MatchLabels {
		parts = append(parts, k+"="+v)
	}
	for _, r := range s.Requirements {
		parts = append(parts, fmt.Sprintf("%s %s (%s)", r.Key, strings.ToLower(r.Operator), strings.Join(r.Values, ",")))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "{} (everything)"
	}
	return strings.Join(parts, ", ")
}

// Has says whether the policy declares the policy type t.
func (p Policy) Has(t string) bool { return slices.Contains(p.Types, t) }

// Selects says whether the policy applies to pod.
func (p Policy) Selects(pod Pod) bool {
	return p.Namespace == pod.Namespace && p.PodSelector.Matches(pod.Labels)
}

// Selecting lists the policies of the cluster that apply to pod.
func (c *Cluster) Selecting(pod Pod) []Policy {
	var out []Policy
	for _, p := range c.Policies {
		if p.Selects(pod) {
			out = append(out, p)
		}
	}
	return out
}

// ProxyNS is the proxy's namespace (the runs' when not set, as ssebench).
func (c *Cluster) ProxyNS() string {
	if c.ProxyNamespace != "" {
		return c.ProxyNamespace
	}
	return c.Namespace
}

// String names a peer as a person reads it.
func (p Peer) String() string {
	if p.IPBlock != nil {
		if len(p.IPBlock.Except) == 0 {
			return "ipBlock " + p.IPBlock.CIDR
		}
		return fmt.Sprintf("ipBlock %s except %s", p.IPBlock.CIDR, strings.Join(p.IPBlock.Except, ", "))
	}
	var parts []string
	if p.NamespaceSelector != nil {
		parts = append(parts, "namespaces "+p.NamespaceSelector.String())
	}
	if p.PodSelector != nil {
		parts = append(parts, "pods "+p.PodSelector.String())
	}
	return strings.Join(parts, " and ")
}

func (p PolicyPort) String() string {
	proto := p.Protocol
	if proto == "" {
		proto = "TCP"
	}
	switch {
	case p.Port == "":
		return proto + " every port"
	case p.EndPort > 0:
		return fmt.Sprintf("%s %s-%d", proto, p.Port, p.EndPort)
	}
	return proto + " " + p.Port
}

// prefixWithin says whether every address of inner is in outer.
func prefixWithin(inner, outer netip.Prefix) bool {
	return outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}
