package kubernetes

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

// maxList bounds what one list reads: more is refused, not cut short,
// since a check judged on part of the policies could pass what it missed.
const maxList = 2000

// Discover reads one runs' namespace: its run pods, the proxy's and the
// database's pods, every NetworkPolicy of both namespaces, the labels of
// the namespaces they name, and what the run pods' service accounts may do.
func (b *Backend) Discover(ctx context.Context, namespace string) (*checks.Deployment, error) {
	c := &checks.Cluster{Namespace: namespace, ProxyNamespace: b.opts.ProxyNamespace, ProxySelector: b.proxySel,
		ProxyPort: b.opts.ProxyPort}
	if _, err := b.api.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("namespace %q does not exist on this cluster", namespace)
	} else if err != nil {
		return nil, fmt.Errorf("reading namespace %s: %s", namespace, oneLine(err))
	}
	runs, err := b.pods(ctx, namespace, labels.Set{LabelRunName: RunName}.String())
	if err != nil {
		return nil, err
	}
	tokens := map[string]bool{} // a service account's automount setting, read once
	for _, p := range runs {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue // ended: nothing of it runs
		}
		if p.Labels[LabelProbe] != "" {
			continue // an audit's probe pod (this audit's or another's), labelled as a run
		}
		c.RunPods = append(c.RunPods, toPod(p, b.automounts(ctx, p, tokens)))
	}
	proxyNS := c.ProxyNS()
	proxies, err := b.pods(ctx, proxyNS, labels.Set(b.proxySel).String())
	if err != nil {
		return nil, err
	}
	for _, p := range proxies {
		c.ProxyPods = append(c.ProxyPods, toPod(p, false))
	}
	dbs, err := b.pods(ctx, proxyNS, labels.Set(checks.K8sDatabaseLabels()).String())
	if err != nil {
		return nil, err
	}
	for _, p := range dbs {
		c.DatabasePods = append(c.DatabasePods, toPod(p, false))
	}
	for _, ns := range uniq(namespace, proxyNS) {
		pols, err := b.policies(ctx, ns)
		if err != nil {
			return nil, err
		}
		for _, p := range pols {
			c.Policies = append(c.Policies, toPolicy(p))
		}
	}
	c.Access, c.AccessErr = b.access(ctx, c.RunPods)
	c.Nodes, c.NodesErr = b.nodes(ctx)
	c.APIServer = b.apiServer(ctx)
	d := &checks.Deployment{Backend: b.Name(), Project: namespace, Cluster: c}
	for _, p := range c.RunPods {
		// A running pod is a live run: the in-container checks exec into it.
		d.Runs = append(d.Runs, checks.Container{ID: p.Namespace + "/" + p.Name, Name: p.Name, RunID: p.RunID,
			Running: p.Phase == string(corev1.PodRunning)})
	}
	if d.ProxyAddress, d.ProxyName, err = b.proxyService(ctx, proxyNS, proxies); err != nil {
		return nil, err
	}
	return d, nil
}

// proxyService is where runs reach the proxy: the ClusterIP and port of
// the Service in front of the proxy's pods, and its name in the cluster's
// DNS; "" when there is none.
func (b *Backend) proxyService(ctx context.Context, ns string, proxies []corev1.Pod) (string, string, error) {
	l, err := b.api.CoreV1().Services(ns).List(ctx, metav1.ListOptions{Limit: maxList})
	if err != nil {
		return "", "", fmt.Errorf("listing Services in %s: %s", ns, oneLine(err))
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	for _, svc := range l.Items {
		if len(svc.Spec.Selector) == 0 || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
			continue
		}
		fronts := false
		for _, p := range proxies {
			fronts = fronts || labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(p.Labels))
		}
		if !fronts {
			continue
		}
		for _, port := range svc.Spec.Ports {
			if int(port.Port) == b.opts.ProxyPort || port.TargetPort.IntValue() == b.opts.ProxyPort {
				// The fully qualified name: a run pod's search path is its own namespace's.
				return net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(port.Port))),
					svc.Name + "." + ns + ".svc." + clusterDomain, nil
			}
		}
	}
	return "", "", nil
}

// clusterDomain is the cluster's DNS domain (the kubelet's default).
const clusterDomain = "cluster.local"

func (b *Backend) pods(ctx context.Context, ns, selector string) ([]corev1.Pod, error) {
	l, err := b.api.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector, Limit: maxList})
	if err != nil {
		return nil, fmt.Errorf("listing pods in %s: %s", ns, oneLine(err))
	}
	if l.Continue != "" {
		return nil, fmt.Errorf("more than %d pods labelled %s in %s: the audit reads at most %d", maxList, selector, ns, maxList)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items, nil
}

func (b *Backend) policies(ctx context.Context, ns string) ([]netv1.NetworkPolicy, error) {
	l, err := b.api.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{Limit: maxList})
	if err != nil {
		return nil, fmt.Errorf("listing NetworkPolicies in %s: %s", ns, oneLine(err))
	}
	if l.Continue != "" {
		return nil, fmt.Errorf("more than %d NetworkPolicies in %s: the audit reads at most %d", maxList, ns, maxList)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items, nil
}

// automounts says whether a token is mounted into a pod: the pod's own
// setting, else its service account's (true when neither says); accounts
// holds the accounts' settings already read.
func (b *Backend) automounts(ctx context.Context, p corev1.Pod, accounts map[string]bool) bool {
	for _, v := range p.Spec.Volumes {
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					return true // mounted, whatever the settings say
				}
			}
		}
	}
	if p.Spec.AutomountServiceAccountToken != nil {
		return *p.Spec.AutomountServiceAccountToken
	}
	name := saName(p)
	if mounts, ok := accounts[name]; ok {
		return mounts
	}
	mounts := true
	sa, err := b.api.CoreV1().ServiceAccounts(p.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err == nil && sa.AutomountServiceAccountToken != nil {
		mounts = *sa.AutomountServiceAccountToken
	}
	accounts[name] = mounts
	return mounts
}

// access asks the authorizer each of the checks' questions about each run
// pod's service account, in its namespace.
func (b *Backend) access(ctx context.Context, pods []checks.Pod) (map[string][]checks.Access, string) {
	out := map[string][]checks.Access{}
	for _, p := range pods {
		sa := p.Namespace + "/" + p.ServiceAccount
		if _, done := out[sa]; done {
			continue
		}
		out[sa] = []checks.Access{}
		for _, q := range checks.K8sAccessQuestions {
			res, sub, _ := strings.Cut(q.Resource, "/")
			review := &authv1.SubjectAccessReview{Spec: authv1.SubjectAccessReviewSpec{
				User:   "system:serviceaccount:" + p.Namespace + ":" + p.ServiceAccount,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + p.Namespace, "system:authenticated"},
				ResourceAttributes: &authv1.ResourceAttributes{Namespace: p.Namespace, Verb: q.Verb,
					Group: groupOf(res), Resource: res, Subresource: sub},
			}}
			got, err := b.api.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				return nil, "asking the authorizer: " + oneLine(err)
			}
			out[sa] = append(out[sa], checks.Access{Verb: q.Verb, Resource: q.Resource, Allowed: got.Status.Allowed})
		}
	}
	return out, ""
}

// groupOf is the API group of the resources the checks ask about.
func groupOf(resource string) string {
	switch resource {
	case "jobs":
		return "batch"
	case "networkpolicies":
		return "networking.k8s.io"
	}
	return ""
}

func saName(p corev1.Pod) string {
	if p.Spec.ServiceAccountName != "" {
		return p.Spec.ServiceAccountName
	}
	return "default"
}

func uniq(s ...string) []string {
	var out []string
	for _, x := range s {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}
