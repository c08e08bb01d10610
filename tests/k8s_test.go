package tests

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ssebench-audit/ssebench-audit/checks"
	fk8s "github.com/ssebench-audit/ssebench-audit/fixtures/k8s"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// upK8s makes an ssebench-shaped deployment on the test cluster, removed
// when the test ends.
func upK8s(t *testing.T, opts ...fk8s.Options) *fk8s.Deployment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var o fk8s.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	d, err := fk8s.Up(ctx, kubeAPI, o)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		assert.NoError(t, d.Down(ctx))
	})
	return d
}

func k8sArgs(d *fk8s.Deployment, extra ...string) []string {
	return append([]string{"--backend", "kubernetes", "--kubeconfig", kubeconfig, "--namespace", d.Runs,
		"--proxy-namespace", d.Proxy}, extra...)
}

// The correct deployment passes every check made from the cluster's API,
// the report names the backend and says what was not checked, and gate
// attests the cluster by its kube-system namespace's UID.
func TestKubernetesCorrectDeploymentPasses(t *testing.T) {
	t.Parallel()
	d := upK8s(t)
	r := withReport(t, runTool(t, nil, append([]string{"audit", "--format", "json"}, k8sArgs(d)...)...))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code, "%v", failing(r.report))
	assert.Equal(t, "kubernetes", r.report.Backend)
	assert.Equal(t, report.VerdictPass, r.report.Verdict)
	require.Len(t, r.report.Projects, 1)
	assert.Equal(t, d.Runs, r.report.Projects[0].Name)
	for _, id := range []string{checks.K8sPolicySelected, checks.K8sPolicyEffective, checks.K8sPodHardening} {
		rows := checksOf(r.report, d.Runs, id)
		require.Len(t, rows, 2, "%s: one row per run pod", id)
		for _, c := range rows {
			assert.Equal(t, report.Pass, c.Status, "%s %s: %s", id, c.Target, c.Observed)
		}
	}
	assert.Len(t, checksOf(r.report, d.Runs, checks.K8sProxyIngress), 2, "the proxy and its database")
	assert.Len(t, checksOf(r.report, d.Runs, checks.K8sServiceAccount), 1)
	for _, c := range checksOf(r.report, d.Runs, checks.NetworkAgentsExists) {
		t.Errorf("a Docker check was made on a cluster: %+v", c)
	}
	assert.Contains(t, strings.Join(r.report.Notes, "\n"), "whether the network plugin enforces the policies was not checked")

	for _, format := range []string{"table", "markdown", "junit"} {
		r := runTool(t, nil, append([]string{"audit", "--format", format}, k8sArgs(d)...)...)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "kubernetes", "%s names the backend", format)
	}

	att := filepath.Join(t.TempDir(), "att.json")
	r = runTool(t, nil, append([]string{"gate", "--format", "json", "--attestation", att}, k8sArgs(d)...)...)
	assert.Equal(t, 0, r.code, r.stderr)
	data, err := os.ReadFile(att)
	require.NoError(t, err)
	requireSchema(t, "attestation", data)
	var a struct {
		Engine struct {
			ID string `json:"id"`
		} `json:"engine"`
	}
	require.NoError(t, json.Unmarshal(data, &a))
	ns, err := kubeAPI.CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, string(ns.UID), a.Engine.ID)
}

// Each mutant is caught by its check ID; the rest of the deployment, as
// correct as before, still passes that check.
func TestKubernetesMutantsFail(t *testing.T) {
	t.Parallel()
	for _, m := range fk8s.Mutants {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			d := upK8s(t)
			require.NoError(t, m.Apply(context.Background(), d))
			r := withReport(t, runTool(t, nil, append([]string{"audit", "--format", "json"}, k8sArgs(d)...)...))
			require.NotNil(t, r.report, r.stderr)
			assert.Equal(t, 1, r.code, "a mutant fails the audit")
			target := m.Target
			if target == "" {
				target = "serviceaccount " + d.Runs + "/default"
			}
			found := false
			for _, c := range checksOf(r.report, d.Runs, m.CheckID) {
				if c.Target == target {
					found = true
					assert.Equal(t, report.Fail, c.Status, "%s: %s", c.Target, c.Observed)
				}
			}
			assert.True(t, found, "no %s row for %s: %v", m.CheckID, target, failing(r.report))
		})
	}
}

// A namespace that does not exist, and a cluster that does not answer,
// are one-line errors with exit 2.
func TestKubernetesBadInput(t *testing.T) {
	t.Parallel()
	r := runTool(t, nil, "audit", "--backend", "kubernetes", "--kubeconfig", kubeconfig, "--namespace", "sba-no-such-namespace")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stdout, `namespace "sba-no-such-namespace" does not exist`)
	r = runTool(t, nil, "audit", "--backend", "kubernetes", "--kubeconfig", filepath.Join(t.TempDir(), "none"))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "kubeconfig")
	assert.NotContains(t, r.stderr, "goroutine")
	r = runTool(t, nil, "audit", "--backend", "kubernetes", "--kubeconfig", kubeconfig, "--project", "x")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--namespace")
	r = runTool(t, nil, "audit", "--backend", "podman")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `unknown --backend "podman"`)
}

// The audit needs no more than docs/kubernetes-rbac.yaml grants: audited
// as a user bound by exactly that file (through impersonation), the
// correct deployment passes as it does as cluster admin.
func TestKubernetesAuditWithTheDocumentedRBAC(t *testing.T) {
	t.Parallel()
	d := upK8s(t)
	asUser := auditRBAC(t, d)
	args := []string{"audit", "--format", "json", "--backend", "kubernetes", "--kubeconfig", asUser,
		"--namespace", d.Runs, "--proxy-namespace", d.Proxy}
	r := withReport(t, runTool(t, nil, args...))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code, "%v", failing(r.report))
	assert.Len(t, checksOf(r.report, d.Runs, checks.K8sPolicyEffective), 2)

	// And without it, the audit says what it could not read.
	cfg := mustLoad(t, kubeconfig)
	for _, a := range cfg.AuthInfos {
		a.Impersonate = "nobody-" + d.Runs
	}
	require.NoError(t, clientcmd.WriteToFile(*cfg, asUser))
	r = runTool(t, nil, args...)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stdout, "forbidden")
}

// auditRBAC applies docs/kubernetes-rbac.yaml for the deployment's
// namespaces, to a user of the deployment's own, and returns a kubeconfig
// that acts as that user (through impersonation).
func auditRBAC(t *testing.T, d *fk8s.Deployment) string {
	t.Helper()
	user := "ssebench-audit-" + d.Runs // cluster-wide names: one per test deployment
	manifest, err := os.ReadFile("../docs/kubernetes-rbac.yaml")
	require.NoError(t, err)
	text := strings.NewReplacer("namespace: ssebench-runs", "namespace: "+d.Runs, "namespace: ssebench\n", "namespace: "+d.Proxy+"\n",
		"name: ssebench-audit", "name: "+user).Replace(string(manifest))
	ctx := context.Background()
	for _, doc := range strings.Split(text, "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		require.NoError(t, err)
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			_, err = kubeAPI.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() { _ = kubeAPI.RbacV1().ClusterRoles().Delete(ctx, o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.ClusterRoleBinding:
			_, err = kubeAPI.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() { _ = kubeAPI.RbacV1().ClusterRoleBindings().Delete(ctx, o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.Role:
			_, err = kubeAPI.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = kubeAPI.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("unexpected object in the RBAC manifest: %T", obj)
		}
		require.NoError(t, err)
	}
	cfg := mustLoad(t, kubeconfig)
	for _, a := range cfg.AuthInfos {
		a.Impersonate = user
	}
	asUser := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, asUser))
	return asUser
}

func mustLoad(t *testing.T, path string) *clientcmdapi.Config {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	require.NoError(t, err)
	return cfg
}
