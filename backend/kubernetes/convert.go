package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

// toPod is what the checks judge of a pod.
func toPod(p corev1.Pod, token bool) checks.Pod {
	out := checks.Pod{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, RunID: p.Labels["ssebench.run-id"],
		Phase: string(p.Status.Phase), ServiceAccount: saName(p), TokenMounted: token,
		ServiceLinks: p.Spec.EnableServiceLinks == nil || *p.Spec.EnableServiceLinks,
		HostNetwork:  p.Spec.HostNetwork, HostPID: p.Spec.HostPID, HostIPC: p.Spec.HostIPC}
	if !p.Spec.HostNetwork { // a host-network pod's address is its node's
		for _, ip := range p.Status.PodIPs {
			out.IPs = append(out.IPs, ip.IP)
		}
	}
	if sc := p.Spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		out.Seccomp = string(sc.SeccompProfile.Type)
	}
	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil {
			out.HostPaths = append(out.HostPaths, v.HostPath.Path)
		}
	}
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range list {
			out.Containers = append(out.Containers, toContainer(c))
		}
	}
	return out
}

func toContainer(c corev1.Container) checks.PodContainer {
	out := checks.PodContainer{Name: c.Name}
	sc := c.SecurityContext
	if sc == nil {
		return out
	}
	out.Privileged = sc.Privileged != nil && *sc.Privileged
	out.AllowPrivilegeEscalation = sc.AllowPrivilegeEscalation
	out.ReadOnlyRoot = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
	if sc.SeccompProfile != nil {
		out.Seccomp = string(sc.SeccompProfile.Type)
	}
	if sc.Capabilities != nil {
		for _, cp := range sc.Capabilities.Add {
			out.CapAdd = append(out.CapAdd, string(cp))
		}
		for _, cp := range sc.Capabilities.Drop {
			out.CapDrop = append(out.CapDrop, string(cp))
		}
	}
	return out
}

// toPolicy is a NetworkPolicy in the checks' terms. policyTypes left empty
// mean Ingress, and Egress too when the policy has egress rules (the API
// server fills them in, but older objects may lack them).
func toPolicy(p netv1.NetworkPolicy) checks.Policy {
	out := checks.Policy{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, PodSelector: toSelector(p.Spec.PodSelector)}
	for _, t := range p.Spec.PolicyTypes {
		out.Types = append(out.Types, string(t))
	}
	if len(out.Types) == 0 {
		out.Types = []string{"Ingress"}
		if len(p.Spec.Egress) > 0 {
			out.Types = append(out.Types, "Egress")
		}
	}
	for _, r := range p.Spec.Ingress {
		out.Ingress = append(out.Ingress, checks.PolicyRule{Peers: toPeers(r.From), Ports: toPorts(r.Ports)})
	}
	for _, r := range p.Spec.Egress {
		out.Egress = append(out.Egress, checks.PolicyRule{Peers: toPeers(r.To), Ports: toPorts(r.Ports)})
	}
	return out
}

func toPeers(peers []netv1.NetworkPolicyPeer) []checks.Peer {
	var out []checks.Peer
	for _, p := range peers {
		var peer checks.Peer
		if p.PodSelector != nil {
			s := toSelector(*p.PodSelector)
			peer.PodSelector = &s
		}
		if p.NamespaceSelector != nil {
			s := toSelector(*p.NamespaceSelector)
			peer.NamespaceSelector = &s
		}
		if p.IPBlock != nil {
			peer.IPBlock = &checks.IPBlock{CIDR: p.IPBlock.CIDR, Except: p.IPBlock.Except}
		}
		out = append(out, peer)
	}
	return out
}

func toPorts(ports []netv1.NetworkPolicyPort) []checks.PolicyPort {
	var out []checks.PolicyPort
	for _, p := range ports {
		pp := checks.PolicyPort{Protocol: "TCP"}
		if p.Protocol != nil {
			pp.Protocol = string(*p.Protocol)
		}
		if p.Port != nil {
			pp.Port = p.Port.String()
		}
		if p.EndPort != nil {
			pp.EndPort = int(*p.EndPort)
		}
		out = append(out, pp)
	}
	return out
}

func toSelector(s metav1.LabelSelector) checks.Selector {
	out := checks.Selector{MatchLabels: s.MatchLabels}
	for _, r := range s.MatchExpressions {
		out.Requirements = append(out.Requirements, checks.Requirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values})
	}
	return out
}
