package checks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const K8sProxyIngress = "k8s.proxy.ingress"

// The Helm chart's ingress policies (docs/ssebench.md, "Kubernetes
// backend"), as data: the proxy admits its port from the web UI's pods and
// from run pods in the runs' namespace; the database admits 5432 from the
// proxy's pods only.
var (
	k8sWebUIPods    = map[string]string{"app.kubernetes.io/name": "webui"}
	k8sRunPods      = map[string]string{"app.kubernetes.io/name": "ssebench-run", "app.kubernetes.io/managed-by": "ssebench"}
	k8sDatabasePods = map[string]string{"app.kubernetes.io/name": "litellm-db"}
	k8sDatabasePort = 5432
)

var k8sProxyIngress = &Check{
	ID: K8sProxyIngress,
	Title: "The proxy admits its port only from the web UI and the run pods of the runs' namespace, and its database only " +
		"from the proxy (the Helm chart's policies)",
	From:     FromAPI,
	Remedy:   "Install the chart with networkPolicy.enabled=true, and keep networkPolicy.proxyExtraIngress to what must call the proxy.",
	Backends: []string{BackendKubernetes},
	Host: func(in HostInput) []report.Check {
		c := in.Dep.Cluster
		if c == nil {
			return nil
		}
		proxyPort := strconv.Itoa(c.ProxyPort)
		var out []report.Check
		for _, pod := range c.ProxyPods {
			out = append(out, ingressShape(c, pod, fmt.Sprintf("TCP %s from the web UI and the runs' pods only", proxyPort),
				func(p Policy, peer Peer) bool {
					ns, ok := peerNamespace(p, peer)
					if !ok || peer.PodSelector == nil {
						return false
					}
					return (ns == c.ProxyNS() && peer.PodSelector.RequiresAll(k8sWebUIPods)) ||
						(ns == c.Namespace && peer.PodSelector.RequiresAll(k8sRunPods))
				}, PolicyPort{Protocol: "TCP", Port: proxyPort},
				"every pod of the cluster can call the proxy and spend its keys"))
		}
		for _, pod := range c.DatabasePods {
			out = append(out, ingressShape(c, pod, fmt.Sprintf("TCP %d from the proxy's pods only", k8sDatabasePort),
				func(p Policy, peer Peer) bool {
					ns, ok := peerNamespace(p, peer)
					return ok && ns == c.ProxyNS() && peer.PodSelector != nil && peer.PodSelector.RequiresAll(c.ProxySelector)
				}, PolicyPort{Protocol: "TCP", Port: strconv.Itoa(k8sDatabasePort)},
				"every pod of the cluster can reach the database that holds the proxy's keys"))
		}
		if len(c.ProxyPods) == 0 {
			out = append(out, report.Check{Target: "proxy", Status: report.Warn, Expected: "the proxy's pods in namespace " + c.ProxyNS(),
				Observed: fmt.Sprintf("no pod labelled %s in namespace %s", Selector{MatchLabels: c.ProxySelector}, c.ProxyNS()),
				Message:  "set --proxy-namespace and --proxy-selector as ssebench's SSEBENCH_K8S_PROXY_NAMESPACE and SSEBENCH_K8S_PROXY_SELECTOR"})
		}
		return out
	},
}

// ingressShape judges the ingress of one pod: isolated, and every rule
// from a peer that ok accepts, on port.
func ingressShape(c *Cluster, pod Pod, expected string, ok func(Policy, Peer) bool, port PolicyPort, open string) report.Check {
	row := report.Check{Target: pod.Name, Status: report.Pass, Expected: expected}
	var policies, wider []string
	for _, p := range c.Selecting(pod) {
		if !p.Has("Ingress") {
			continue
		}
		policies = append(policies, p.Name)
		for _, r := range p.Ingress {
			if len(r.Peers) == 0 {
				wider = append(wider, p.Name+": admits every source on "+portsString(r.Ports))
				continue
			}
			for _, peer := range r.Peers {
				if !ok(p, peer) {
					wider = append(wider, p.Name+": admits "+peer.String())
				}
			}
			if len(r.Ports) == 0 {
				wider = append(wider, p.Name+": admits every port")
			}
			for _, pp := range r.Ports {
				if !portIn(pp, []PolicyPort{port}) {
					wider = append(wider, p.Name+": admits "+pp.String())
				}
			}
		}
	}
	switch {
	case len(policies) == 0:
		row.Status, row.Observed, row.Message = report.Warn, "no ingress policy selects it", open
	case len(wider) > 0:
		row.Status, row.Observed, row.Message = report.Warn, strings.Join(wider, "; "), open
	default:
		row.Observed = "ingress from " + strings.Join(policies, ", ") + ": as the chart's"
	}
	return row
}

// K8sDatabaseLabels are the labels of the chart's database pods, which the
// backend looks for in the proxy's namespace.
func K8sDatabaseLabels() map[string]string { return k8sDatabasePods }

// peerNamespace is the one namespace a peer's pods are in.
func peerNamespace(p Policy, peer Peer) (string, bool) {
	if peer.IPBlock != nil {
		return "", false
	}
	if peer.NamespaceSelector == nil {
		return p.Namespace, true
	}
	return oneNamespace(*peer.NamespaceSelector)
}
