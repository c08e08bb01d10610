package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ssebench-audit/ssebench-audit/checks"
	fk8s "github.com/ssebench-audit/ssebench-audit/fixtures/k8s"
	"github.com/ssebench-audit/ssebench-audit/images"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// The test cluster's node (cluster/node-up.sh) starts once, for the tests
// that need pods to run; cluster/down.sh, at the end, stops it with the
// rest.
var (
	nodeOnce sync.Once
	nodeErr  error
	nodeOut  []byte
)

func requireNode(t *testing.T) {
	t.Helper()
	nodeOnce.Do(func() { nodeOut, nodeErr = exec.Command("../cluster/node-up.sh").CombinedOutput() })
	require.NoError(t, nodeErr, "cluster/node-up.sh:\n%s", nodeOut)
}

// ssebench's runs as it makes them, Jobs whose pods run on a real node:
// the audit finds the Jobs' pods, running, and passes them.
func TestKubernetesRunJobsOnANode(t *testing.T) {
	t.Parallel()
	requireNode(t)
	d := upK8s(t, fk8s.Options{Image: fk8s.PauseImage})
	ctx := context.Background()
	var running []string
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		pods, err := kubeAPI.CoreV1().Pods(d.Runs).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=ssebench-run"})
		require.NoError(t, err)
		running = running[:0]
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running = append(running, p.Name)
			}
		}
		if len(running) == 2 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	require.Len(t, running, 2, "both runs' Job pods run")

	r := withReport(t, runTool(t, nil, append([]string{"audit", "--format", "json"}, k8sArgs(d)...)...))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code, "%v", failing(r.report))
	assert.Equal(t, report.VerdictPass, r.report.Verdict)
	var targets []string
	for _, c := range checksOf(r.report, d.Runs, checks.K8sPolicyEffective) {
		targets = append(targets, c.Target)
	}
	assert.ElementsMatch(t, running, targets, "one row per running Job pod")
}

// The node enforces NetworkPolicies (kube-network-policies, patched for
// this kernel): a pod that ssebench's restricted policy selects reaches
// kube-dns but not the world, and one no policy selects reaches both.
// Enforcement starts a moment after a pod starts (the enforcer learns the
// pod's address from its status: containerd 1.6 has no NRI to tell it
// sooner), so the probe waits before it runs, and a reached world is tried
// again, a few times, before it counts.
func TestKubernetesPoliciesEnforced(t *testing.T) {
	t.Parallel()
	requireNode(t)
	probeRef := importProbeImage(t)
	d := upK8s(t)
	ctx := context.Background()
	_, err := kubeAPI.NetworkingV1().NetworkPolicies(d.Runs).Create(ctx, d.RunPolicy("enforced", false), metav1.CreateOptions{})
	require.NoError(t, err)

	plan := probes.Plan{TimeoutMS: 2000, Tasks: []probes.Task{
		{ID: "dns", Kind: probes.KindDNS, Address: "10.96.0.10:53", Name: "kube-dns.kube-system.svc.cluster.local"},
		{ID: "world", Kind: probes.KindTCP, Address: world.HTTP},
	}}
	open := probePod(t, d.Runs, probeRef, "open", plan)
	assert.Equal(t, probes.Address, open["dns"].Outcome, "kube-dns answers: %+v", open["dns"])
	assert.Equal(t, probes.Connected, open["world"].Outcome, "no policy: the world answers: %+v", open["world"])

	var fenced map[string]probes.Result
	for i := 0; i < 4; i++ {
		fenced = probePod(t, d.Runs, probeRef, "enforced", plan)
		if fenced["world"].Outcome != probes.Connected {
			break
		}
		t.Logf("attempt %d: the world answered a fenced pod: enforcement not yet programmed", i+1)
		time.Sleep(2 * time.Second)
	}
	assert.Equal(t, probes.Address, fenced["dns"].Outcome, "the policy allows kube-dns: %+v", fenced["dns"])
	assert.NotEqual(t, probes.Connected, fenced["world"].Outcome, "the policy blocks the world: %+v", fenced["world"])
}

// importProbeImage puts the probe image into the node's containerd, once.
func importProbeImage(t *testing.T) string {
	t.Helper()
	const ref = "sba.local/ssebench-audit-probe:test"
	probeImageOnce.Do(func() {
		bin, err := os.ReadFile(filepath.Join(filepath.Dir(binary), "ssebench-audit-probe"))
		if err != nil {
			probeImageErr = err
			return
		}
		img, err := images.OCIProbeImage(bin, nil)
		if err != nil {
			probeImageErr = err
			return
		}
		file := filepath.Join(os.TempDir(), "sba-probe-image-"+randHex(4)+".tar")
		defer os.Remove(file)
		if probeImageErr = tarball.WriteToFile(file, name.MustParseReference(ref).(name.Tag), img); probeImageErr != nil {
			return
		}
		sock, _ := filepath.Abs("../bin/cluster/state/node/containerd/containerd.sock")
		out, err := exec.Command("ctr", "--address", sock, "-n", "k8s.io", "images", "import", file).CombinedOutput()
		if err != nil {
			probeImageErr = fmt.Errorf("ctr images import: %v: %s", err, out)
		}
	})
	require.NoError(t, probeImageErr)
	return ref
}

var (
	probeImageOnce sync.Once
	probeImageErr  error
)

// probePod runs plan in a pod labelled with runID (so that the run's
// policy selects it) and returns its results by task ID.
func probePod(t *testing.T, ns, image, runID string, plan probes.Plan) map[string]probes.Result {
	t.Helper()
	ctx := context.Background()
	data, err := json.Marshal(plan)
	require.NoError(t, err)
	name := "probe-" + runID + "-" + randHex(3)
	_, err = kubeAPI.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
		Data: map[string]string{"plan.json": string(data)}}, metav1.CreateOptions{})
	require.NoError(t, err)
	no := false
	_, err = kubeAPI.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"ssebench.run-id": runID}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: &no,
			Containers: []corev1.Container{{Name: "probe", Image: image, ImagePullPolicy: corev1.PullNever,
				// A pod's policy is enforced a moment after it starts.
				Args:         []string{"--plan", "/plan/plan.json", "--after", "3s"},
				VolumeMounts: []corev1.VolumeMount{{Name: "plan", MountPath: "/plan"}}}},
			Volumes: []corev1.Volume{{Name: "plan", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	deadline := time.Now().Add(90 * time.Second)
	for {
		p, err := kubeAPI.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			break
		}
		require.True(t, time.Now().Before(deadline), "the probe pod did not finish: %+v", p.Status)
		time.Sleep(300 * time.Millisecond)
	}
	logs, err := kubeAPI.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	require.NoError(t, err)
	rep, err := probes.ParseReport(bytes.NewReader(logs), 1<<20)
	require.NoError(t, err, "%s", logs)
	out := map[string]probes.Result{}
	for _, r := range rep.Results {
		out[r.ID] = r
	}
	return out
}
