package kubernetes

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

// nodes lists the cluster's nodes and their addresses; an error is said,
// not fatal: the other checks stand without it.
func (b *Backend) nodes(ctx context.Context) ([]checks.Node, string) {
	l, err := b.api.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: maxList})
	if err != nil {
		return nil, "listing nodes: " + oneLine(err)
	}
	if l.Continue != "" {
		return nil, fmt.Sprintf("more than %d nodes: the audit reads at most %d", maxList, maxList)
	}
	var out []checks.Node
	for _, n := range l.Items {
		node := checks.Node{Name: n.Name}
		for _, a := range n.Status.Addresses {
			if (a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP) && net.ParseIP(a.Address) != nil {
				node.Addresses = append(node.Addresses, a.Address)
			}
		}
		out = append(out, node)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, ""
}

// apiServer is where pods reach the API server: the kubernetes Service in
// the default namespace, as every pod's KUBERNETES_SERVICE_HOST names it;
// "" when it cannot be read.
func (b *Backend) apiServer(ctx context.Context) string {
	svc, err := b.api.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone || len(svc.Spec.Ports) == 0 {
		return ""
	}
	return net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port)))
}
