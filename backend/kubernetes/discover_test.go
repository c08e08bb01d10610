package kubernetes

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
)

// Discovery on a fake API server: run pods but not ended ones or audits'
// probe pods, the proxy's Service as where runs reach it, policies with
// their types filled in as the API server would for old objects.
func TestDiscover(t *testing.T) {
	run := map[string]string{LabelRunName: RunName, "ssebench.run-id": "r1"}
	probe := map[string]string{LabelRunName: RunName, "ssebench.run-id": "p", LabelProbe: "a1"}
	proxy := map[string]string{"app.kubernetes.io/name": "litellm"}
	no := false
	api := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "runs"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "run-1", Namespace: "runs", Labels: run}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "quiet", Namespace: "runs"}, AutomountServiceAccountToken: &no},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "run-2", Namespace: "runs", Labels: run}, Spec: corev1.PodSpec{ServiceAccountName: "quiet"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "run-3", Namespace: "runs", Labels: run}, Spec: corev1.PodSpec{ServiceAccountName: "quiet"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "run-0", Namespace: "runs", Labels: run}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sba-probe", Namespace: "runs", Labels: probe}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "litellm-0", Namespace: "runs", Labels: proxy}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "runs"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "x"}, ClusterIP: "10.96.0.9", Ports: []corev1.ServicePort{{Port: 4000}}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "litellm", Namespace: "runs"},
			Spec: corev1.ServiceSpec{Selector: proxy, ClusterIP: "10.96.0.20", Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(4000)}}}},
		&netv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "runs"},
			Spec: netv1.NetworkPolicySpec{Egress: []netv1.NetworkPolicyEgressRule{{}}}},
	)
	b, err := New(api, Options{Namespace: "runs", ProxySelector: "app.kubernetes.io/name=litellm", ProxyPort: 4000})
	require.NoError(t, err)
	d, err := b.Discover(context.Background(), "runs")
	require.NoError(t, err)
	require.Len(t, d.Cluster.RunPods, 3, "the live runs only: not the ended one, not the probe")
	assert.Equal(t, "run-1", d.Cluster.RunPods[0].Name)
	assert.True(t, d.Cluster.RunPods[0].TokenMounted, "no automount setting anywhere: a token is mounted")
	for _, p := range d.Cluster.RunPods[1:] {
		assert.False(t, p.TokenMounted, "%s: its service account turns the token off", p.Name)
	}
	assert.Len(t, d.Cluster.ProxyPods, 1)
	assert.Equal(t, "10.96.0.20:80", d.ProxyAddress, "the Service in front of the proxy's pods")
	assert.Equal(t, "litellm.runs.svc.cluster.local", d.ProxyName)
	require.Len(t, d.Cluster.Policies, 1)
	assert.Equal(t, []string{"Ingress", "Egress"}, d.Cluster.Policies[0].Types)

	_, err = b.Discover(context.Background(), "nope")
	assert.ErrorContains(t, err, `namespace "nope" does not exist`)
	_, err = New(api, Options{ProxySelector: "a=b,,=", ProxyPort: 4000})
	assert.ErrorContains(t, err, "invalid --proxy-selector")
}
