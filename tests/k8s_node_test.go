package tests

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ssebench-audit/ssebench-audit/checks"
	fk8s "github.com/ssebench-audit/ssebench-audit/fixtures/k8s"
	"github.com/ssebench-audit/ssebench-audit/fixtures/stub"
	"github.com/ssebench-audit/ssebench-audit/images"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// The test cluster's node (cluster/node-up.sh) starts once, before the
// tests (TestMain says why), for those that need pods to run;
// cluster/down.sh, at the end, stops it with the rest.
var (
	nodeOnce sync.Once
	nodeErr  error
	nodeOut  []byte
)

func startNode() {
	nodeOnce.Do(func() { nodeOut, nodeErr = exec.Command("../cluster/node-up.sh").CombinedOutput() })
}

func requireNode(t *testing.T) {
	t.Helper()
	startNode()
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

// importProbeImage puts the probe image (the probe beside the tool, as
// `probe-image push` makes it) into the node's containerd, once.
func importProbeImage(t *testing.T) string {
	t.Helper()
	probeImageOnce.Do(func() {
		probeImageErr = importImage("sba.local/ssebench-audit-probe:test", "ssebench-audit-probe", images.ProbeEntrypoint)
	})
	require.NoError(t, probeImageErr)
	return "sba.local/ssebench-audit-probe:test"
}

// importStubImage puts the stand-ins' image (the tool, run as
// `fixture-stub`) into the node's containerd, once.
func importStubImage(t *testing.T) string {
	t.Helper()
	stubImageOnce.Do(func() {
		stubImageErr = importImage("sba.local/ssebench-audit-stub:test", "ssebench-audit", []string{"/ssebench-audit", "fixture-stub"})
	})
	require.NoError(t, stubImageErr)
	return "sba.local/ssebench-audit-stub:test"
}

var (
	probeImageOnce, stubImageOnce sync.Once
	probeImageErr, stubImageErr   error
)

// importRunImage puts the image of the test's run pods' task container
// into the node's containerd, once: the stand-ins, with busybox as /bin/sh
// and /bin/tar (ssebench's task images have both; the in-container checks
// copy the probe in with tar, as `kubectl cp` does).
func importRunImage(t *testing.T) string {
	t.Helper()
	const ref = "sba.local/ssebench-audit-run:test"
	runImageOnce.Do(func() {
		runImageErr = importImage(ref, "ssebench-audit", []string{"/ssebench-audit", "fixture-stub"}, withBusybox)
	})
	require.NoError(t, runImageErr)
	return ref
}

var (
	runImageOnce sync.Once
	runImageErr  error
)

// withBusybox adds Debian's static busybox (cluster/build.sh unpacks it)
// as /bin/busybox, /bin/sh and /bin/tar, and a PATH that finds them.
func withBusybox(img v1.Image) (v1.Image, error) {
	bb, err := os.ReadFile("../bin/cluster/busybox")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bb))},
		{Name: "bin/sh", Typeflag: tar.TypeSymlink, Linkname: "busybox"},
		{Name: "bin/tar", Typeflag: tar.TypeSymlink, Linkname: "busybox"},
	} {
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Name == "bin/busybox" {
			if _, err := tw.Write(bb); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return nil, err
	}
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Env = append(cfg.Config.Env, "PATH=/bin")
	return mutate.ConfigFile(img, cfg)
}

// importImage writes a FROM-scratch image of one of the test's binaries
// (changed by edit, when given) and imports it into the node's
// containerd: nothing is pulled.
func importImage(ref, binName string, entrypoint []string, edit ...func(v1.Image) (v1.Image, error)) error {
	bin, err := os.ReadFile(filepath.Join(filepath.Dir(binary), binName))
	if err != nil {
		return err
	}
	img, err := images.FromBinary(bin, "ssebench-audit", entrypoint, nil)
	if err != nil {
		return err
	}
	for _, e := range edit {
		if img, err = e(img); err != nil {
			return err
		}
	}
	file := filepath.Join(os.TempDir(), "sba-image-"+randHex(4)+".tar")
	defer os.Remove(file)
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(file, tag, img); err != nil {
		return err
	}
	sock, _ := filepath.Abs("../bin/cluster/state/node/containerd/containerd.sock")
	if out, err := exec.Command("ctr", "--address", sock, "-n", "k8s.io", "images", "import", file).CombinedOutput(); err != nil {
		return fmt.Errorf("ctr images import: %v: %s", err, out)
	}
	return nil
}

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

// The audit's probe pod stands where a run stands: labelled as a run,
// fenced by the policy ssebench would give it. On a correct deployment it
// reaches the proxy's Service and resolves its name (the positive
// controls), gets no address for outside names from kube-dns (this
// cluster's CoreDNS forwards nothing), and reaches neither the world nor
// an outside resolver; with an allow-all egress policy in the
// namespace it reaches both, and the audit fails on what it saw, not only
// on the policy it read. Nothing of the audit is left in the namespace, and
// it needs no right beyond docs/kubernetes-rbac.yaml's.
func TestKubernetesProbePod(t *testing.T) {
	t.Parallel()
	requireNode(t)
	probeRef, stubRef := importProbeImage(t), importStubImage(t)
	d := upK8s(t, fk8s.Options{Image: fk8s.PauseImage, ProxyImage: stubRef, DaemonImage: importRunImage(t)})
	waitPodsRunning(t, d.Proxy, "app.kubernetes.io/name=litellm", 1)
	waitPodsRunning(t, d.Runs, "app.kubernetes.io/name=ssebench-run", 2) // their daemons are isolation.runs' targets
	args := probePodAudit(t, d, probeRef)

	r := withReport(t, runTool(t, nil, args...))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 0, r.code, "%v", failing(r.report))
	t.Logf("the correct deployment's audit, probe pod and execs into two run pods: %d ms", r.report.DurationMS)
	for _, id := range []string{checks.ProxyReachable, checks.DNSProxy, checks.DNSExternal, checks.EgressInternet, checks.EgressDNSDirect,
		checks.EgressProxyForward} {
		rows := checksOf(r.report, d.Runs, id)
		vantages := map[string]bool{}
		for _, c := range rows {
			assert.Equal(t, report.Pass, c.Status, "%s %s %s: %s", id, c.Vantage, c.Target, c.Observed)
			vantages[c.Vantage] = true
		}
		// From the probe pod, and from inside the restricted run (the open
		// one is expected to reach out).
		assert.Equal(t, map[string]bool{checks.VantageFresh: true, "run:r1": true}, vantages, id)
	}
	assert.NotContains(t, r.report.Notes, "was not checked")
	// The probe pod reaches its node's kubelet and the API server (their
	// Service leads to this machine): the policy model allows a pod its
	// node, so both warn; what stands in for metadata and a node-local
	// DNS cache is fenced off.
	hosts := map[string]report.Check{}
	for _, c := range checksOf(r.report, d.Runs, checks.EgressHost) {
		hosts[strings.Fields(c.Target)[0]] = c
	}
	require.Len(t, hosts, 4, "nodes, API server, metadata, node-local DNS: %v", hosts)
	assert.Equal(t, report.Warn, hosts["nodes"].Status, hosts["nodes"].Observed)
	assert.Contains(t, hosts["nodes"].Observed, ":10250: connected")
	assert.Equal(t, report.Warn, hosts["API"].Status, hosts["API"].Observed)
	assert.Equal(t, report.Pass, hosts["cloud"].Status, hosts["cloud"].Observed)
	assert.Equal(t, report.Pass, hosts["node-local"].Status, hosts["node-local"].Observed)
	// Each run pod's policy admits no ingress: its daemon is not reached.
	requireRunPodsIsolated := func(r result, want report.Status) {
		t.Helper()
		var rows []report.Check
		for _, c := range checksOf(r.report, d.Runs, checks.IsolationRuns) {
			if strings.HasPrefix(c.Target, "run pod ") { // (the others: what each run listens on, read inside it)
				rows = append(rows, c)
			}
		}
		require.GreaterOrEqual(t, len(rows), 2, "one row per run pod: %v", rows)
		for _, c := range rows {
			assert.Equal(t, want, c.Status, "%s: %s", c.Target, c.Observed)
		}
	}
	requireRunPodsIsolated(r, report.Pass)
	requireDaemons := func(r result, observed string) {
		t.Helper()
		var rows []report.Check
		for _, c := range checksOf(r.report, d.Runs, checks.DaemonReferencePatch) {
			if !strings.HasPrefix(c.Target, "p1 ") {
				rows = append(rows, c)
			}
		}
		require.Len(t, rows, 2, "one row per run pod's daemon: %v", rows)
		for _, c := range rows {
			assert.Equal(t, report.Pass, c.Status, "%s: %s", c.Target, c.Observed)
			assert.Contains(t, c.Observed, observed, c.Target)
		}
	}
	requireDaemons(r, "not reachable on 4263")
	assertNoProbeObjects(t, d.Runs)

	_, err := kubeAPI.NetworkingV1().NetworkPolicies(d.Runs).Create(context.Background(), &netv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "allow-all-egress"},
		Spec:       netv1.NetworkPolicySpec{PolicyTypes: []netv1.PolicyType{netv1.PolicyTypeEgress}, Egress: []netv1.NetworkPolicyEgressRule{{}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	r = withReport(t, runTool(t, nil, args...))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 1, r.code)
	reached := false
	for _, c := range checksOf(r.report, d.Runs, checks.EgressInternet) {
		reached = reached || c.Status == report.Fail
	}
	assert.True(t, reached, "the probe pod reached the world: %v", failing(r.report))
	metadata := false
	for _, c := range checksOf(r.report, d.Runs, checks.EgressHost) {
		metadata = metadata || (strings.HasPrefix(c.Target, "cloud metadata") && c.Status == report.Fail)
	}
	assert.True(t, metadata, "the metadata stand-in was reached: %v", failing(r.report))
	// Policies add up: the probe may now send anywhere, but the run pods'
	// own policies still admit nothing in.
	requireRunPodsIsolated(r, report.Pass)

	// An allow-all ingress policy too: the other runs' daemons answer, and
	// one of an old version (p1) hands out the reference patch.
	_, err = kubeAPI.NetworkingV1().NetworkPolicies(d.Runs).Create(context.Background(), &netv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "allow-all-ingress"},
		Spec:       netv1.NetworkPolicySpec{PolicyTypes: []netv1.PolicyType{netv1.PolicyTypeIngress}, Ingress: []netv1.NetworkPolicyIngressRule{{}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, d.AddRun(context.Background(), "p1", false, func(p *corev1.Pod) {
		p.Spec.Containers[0].Args = []string{"daemon", "--listen", ":4263", "--serve-patch"}
	}))
	waitPodsRunning(t, d.Runs, "ssebench.run-id=p1", 1)
	r = withReport(t, runTool(t, nil, args...))
	require.NotNil(t, r.report, r.stderr)
	requireDaemons(r, "403") // reached, and refusing what belongs on the admin socket
	leaked := false
	for _, c := range checksOf(r.report, d.Runs, checks.DaemonReferencePatch) {
		leaked = leaked || (strings.HasPrefix(c.Target, "p1 ") && c.Status == report.Fail)
	}
	assert.True(t, leaked, "the old daemon's patch was found: %v", failing(r.report))
	assert.NotContains(t, r.stdout, stub.PatchMarker, "the patch itself is never printed")
	for _, c := range checksOf(r.report, d.Runs, checks.IsolationRuns) {
		if strings.HasPrefix(c.Target, "run pod ") {
			assert.Contains(t, c.Observed, ":4263: connected", c.Target)
		}
	}
	assertNoProbeObjects(t, d.Runs)
}

// waitPodsRunning waits until n pods the selector matches run.
func waitPodsRunning(t *testing.T, ns, selector string, n int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		pods, err := kubeAPI.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		require.NoError(t, err)
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running >= n {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d of %d pods %s running in %s", running, n, selector, ns)
		time.Sleep(300 * time.Millisecond)
	}
}

// assertNoProbeObjects: nothing the audit made is left in the namespace.
func assertNoProbeObjects(t *testing.T, ns string) {
	t.Helper()
	assert.Zero(t, probeObjects(t, ns), "the audit left pods, policies or plans behind")
}

// Interrupted while its probe pod runs, the audit deletes the pod, its
// plan and its policy; killed, it leaves them, and `cleanup` deletes them.
func TestKubernetesInterruptAndCleanup(t *testing.T) {
	t.Parallel()
	requireNode(t)
	probeRef, stubRef := importProbeImage(t), importStubImage(t)
	d := upK8s(t, fk8s.Options{ProxyImage: stubRef})
	args := append([]string{"audit", "--format", "json"}, k8sArgs(d, "--probe-image", probeRef,
		"--egress-target", world.HTTP, "--dns-server", world.Address)...)
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGKILL} {
		cmd := exec.Command(binary, args...)
		require.NoError(t, cmd.Start())
		deadline := time.Now().Add(60 * time.Second)
		for probeObjects(t, d.Runs) == 0 {
			require.True(t, time.Now().Before(deadline), "no probe pod appeared")
			time.Sleep(100 * time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(sig))
		_ = cmd.Wait()
		if sig == syscall.SIGINT {
			assert.Zero(t, probeObjects(t, d.Runs), "an interrupted audit removes what it made")
			continue
		}
		require.NotZero(t, probeObjects(t, d.Runs), "the killed audit left its probe to clean")
		r := runTool(t, nil, "cleanup", "--backend", "kubernetes", "--kubeconfig", kubeconfig, "--namespace", d.Runs)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Regexp(t, `removed [1-9][0-9]* probe pods, plans and policies`, r.stdout)
		assert.Zero(t, probeObjects(t, d.Runs))
	}
}

// probeObjects counts the pods, policies and plans audits made in ns.
func probeObjects(t *testing.T, ns string) int {
	t.Helper()
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: "ssebench-audit.probe"}
	pods, err := kubeAPI.CoreV1().Pods(ns).List(ctx, sel)
	require.NoError(t, err)
	pols, err := kubeAPI.NetworkingV1().NetworkPolicies(ns).List(ctx, sel)
	require.NoError(t, err)
	cms, err := kubeAPI.CoreV1().ConfigMaps(ns).List(ctx, sel)
	require.NoError(t, err)
	return len(pods.Items) + len(pols.Items) + len(cms.Items)
}

// The enforcer stopped: every policy is in place, so the checks from the
// API pass, but nothing enforces them, and only the probe pod can tell: it
// reaches the world, and egress.internet fails on what it saw. Not
// parallel: the other tests on the cluster need enforcement, which is back,
// and seen to hold, before they run.
func TestKubernetesEnforcerStopped(t *testing.T) {
	requireNode(t)
	probeRef, stubRef := importProbeImage(t), importStubImage(t)
	d := upK8s(t, fk8s.Options{Image: fk8s.PauseImage, ProxyImage: stubRef})
	waitPodsRunning(t, d.Proxy, "app.kubernetes.io/name=litellm", 1)
	stopEnforcer(t)

	args := append([]string{"audit", "--format", "json"}, k8sArgs(d, "--probe-image", probeRef,
		"--egress-target", world.HTTP, "--dns-server", world.Address, "--timeout", "2s",
		"--only", checks.K8sPolicySelected, "--only", checks.K8sPolicyEffective, "--only", checks.ProxyReachable, "--only", checks.EgressInternet)...)
	r := withReport(t, runTool(t, nil, args...))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 1, r.code, "%v", failing(r.report))
	for _, id := range []string{checks.K8sPolicySelected, checks.K8sPolicyEffective, checks.ProxyReachable} {
		for _, c := range checksOf(r.report, d.Runs, id) {
			assert.Equal(t, report.Pass, c.Status, "%s %s: the objects are all there: %s", id, c.Target, c.Observed)
		}
	}
	rows := checksOf(r.report, d.Runs, checks.EgressInternet)
	require.NotEmpty(t, rows)
	for _, c := range rows {
		assert.Equal(t, report.Fail, c.Status, "%s: nothing enforces the policy: %s", c.Target, c.Observed)
	}
}

// stopEnforcer takes the NetworkPolicy enforcer off the node (its
// DaemonSet selects no node) until the test ends, then puts it back and
// waits until a fenced pod is fenced again.
func stopEnforcer(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	ds := kubeAPI.AppsV1().DaemonSets("kube-system")
	patch := func(selector string) {
		_, err := ds.Patch(ctx, "kube-network-policies", types.StrategicMergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"nodeSelector":`+selector+`}}}}`), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	enforcers := func() int {
		pods, err := kubeAPI.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app=kube-network-policies"})
		require.NoError(t, err)
		return len(pods.Items)
	}
	patch(`{"sba.test/enforcer":"stopped"}`)
	t.Cleanup(func() {
		patch(`null`)
		waitPodsRunning(t, "kube-system", "app=kube-network-policies", 1)
		probeRef := importProbeImage(t)
		d := upK8s(t)
		_, err := kubeAPI.NetworkingV1().NetworkPolicies(d.Runs).Create(ctx, d.RunPolicy("fenced", false), metav1.CreateOptions{})
		require.NoError(t, err)
		plan := probes.Plan{TimeoutMS: 2000, Tasks: []probes.Task{{ID: "world", Kind: probes.KindTCP, Address: world.HTTP}}}
		for i := 0; ; i++ {
			if probePod(t, d.Runs, probeRef, "fenced", plan)["world"].Outcome != probes.Connected {
				return
			}
			require.Less(t, i, 10, "the enforcer is back, but a fenced pod still reaches the world")
			time.Sleep(2 * time.Second)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for enforcers() > 0 {
		require.True(t, time.Now().Before(deadline), "the enforcer's pod is still there")
		time.Sleep(300 * time.Millisecond)
	}
	// Its rules stay behind it and, with no one to answer their queue,
	// drop what fenced pods send: a plugin that ignores policies has no
	// rules at all, so they go too (the enforcer makes them again).
	out, err := exec.Command("nft", "list", "tables").Output()
	require.NoError(t, err)
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && strings.Contains(f[2], "network-policies") {
			out, err := exec.Command("nft", "delete", "table", f[1], f[2]).CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
	}
}

// From inside run pods, by exec, as on Docker: the probe goes into each
// run pod's task container over the exec's stdin (tar), runs as root and as
// the agent's uid, and removes itself. On the correct deployment the admin
// socket is root-only, what the run listens on is read, and a restricted
// run's own network is fenced (egress.internet from run:r1); a run whose
// daemon made its admin socket world-writable fails socket.admin. Nothing
// the audit copied is left in any pod, and the user bound by the RBAC
// manifest may do all of it.
func TestKubernetesInsideRunPods(t *testing.T) {
	t.Parallel()
	requireNode(t)
	probeRef, stubRef, runRef := importProbeImage(t), importStubImage(t), importRunImage(t)
	d := upK8s(t, fk8s.Options{Image: fk8s.PauseImage, ProxyImage: stubRef, DaemonImage: runRef})
	require.NoError(t, d.AddRun(context.Background(), "w1", false, func(p *corev1.Pod) {
		p.Spec.Containers[0].Args = []string{"daemon", "--listen", ":4263", "--admin-socket", fk8s.AdminSocket, "--admin-socket-mode", "0666"}
	}))
	waitPodsRunning(t, d.Proxy, "app.kubernetes.io/name=litellm", 1)
	waitPodsRunning(t, d.Runs, "app.kubernetes.io/name=ssebench-run", 3)
	args := probePodAudit(t, d, probeRef)
	r := withReport(t, runTool(t, nil, args...))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 1, r.code, "the world-writable socket fails: %v", failing(r.report))

	sockets := map[string]report.Check{}
	for _, c := range checksOf(r.report, d.Runs, checks.SocketAdmin) {
		if c.Target == fk8s.AdminSocket { // (the old sidecar path is examined too: nothing there)
			sockets[c.Vantage] = c
		}
	}
	require.Len(t, sockets, 3, "one row per run pod: %v", sockets)
	for _, run := range []string{"r1", "o1"} {
		c := sockets["in-container:"+run]
		assert.Equal(t, report.Pass, c.Status, "%s: %s %s", run, c.Observed, c.Message)
	}
	assert.Equal(t, report.Fail, sockets["in-container:w1"].Status, "%+v", sockets["in-container:w1"])
	assert.Contains(t, sockets["in-container:w1"].Observed, "0666")

	listened := 0
	for _, c := range checksOf(r.report, d.Runs, checks.IsolationRuns) {
		if strings.HasPrefix(c.Vantage, "in-container:") {
			listened++
			assert.Contains(t, c.Observed, ":4263/tcp", "the daemon, read from inside %s", c.Vantage)
		}
	}
	assert.Equal(t, 3, listened, "what each run pod listens on")

	egress := map[string]report.Status{}
	for _, c := range checksOf(r.report, d.Runs, checks.EgressInternet) {
		egress[c.Vantage] = c.Status
	}
	assert.Equal(t, report.Pass, egress["run:r1"], "the restricted run's own network is fenced: %v", egress)
	assert.NotContains(t, egress, "run:o1", "an open run is not probed for egress")
	for _, c := range checksOf(r.report, d.Runs, checks.AuditProbe) {
		assert.NotEqual(t, report.Error, c.Status, "%s: %s %s", c.Target, c.Observed, c.Message)
	}
	pods, err := kubeAPI.CoreV1().Pods(d.Runs).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=ssebench-run"})
	require.NoError(t, err)
	for _, pod := range pods.Items {
		out, err := exec.Command("../bin/cluster/kubectl", "--kubeconfig", kubeconfig, "-n", d.Runs, "exec", pod.Name, "-c", "task", "--",
			"busybox", "ls", "-a", "/").CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.NotContains(t, string(out), probes.CopiedPrefix, "%s: the audit left files", pod.Name)
	}
	assertNoProbeObjects(t, d.Runs)
}

// A forwarding HTTP proxy where the LiteLLM proxy should be: the run
// policies let runs reach it, and it takes them to the internet
// (egress.proxy-forward fails from the probe pod).
func TestKubernetesForwardingProxy(t *testing.T) {
	t.Parallel()
	requireNode(t)
	probeRef, stubRef := importProbeImage(t), importStubImage(t)
	d := upK8s(t, fk8s.Options{Image: fk8s.PauseImage, ProxyImage: stubRef, ForwardingProxy: true})
	waitPodsRunning(t, d.Proxy, "app.kubernetes.io/name=litellm", 1)
	r := withReport(t, runTool(t, nil, append([]string{"audit", "--format", "json"}, k8sArgs(d, "--probe-image", probeRef,
		"--egress-target", world.HTTP, "--timeout", "2s", "--only", checks.EgressProxyForward)...)...))
	require.NotNil(t, r.report, r.stderr)
	assert.Equal(t, 1, r.code, "%v", failing(r.report))
	failed := false
	for _, c := range checksOf(r.report, d.Runs, checks.EgressProxyForward) {
		failed = failed || (c.Vantage == checks.VantageFresh && c.Status == report.Fail)
	}
	assert.True(t, failed, "the forwarding proxy was caught: %v", failing(r.report))
}

// probePodAudit is an audit with a probe pod, as a user with the rights
// docs/kubernetes-rbac.yaml grants, no more. egress.host: the node (this
// machine) on a port free a moment ago and on the kubelet's, which the test
// cluster opened; the world stands in for cloud metadata and a node-local
// DNS cache.
func probePodAudit(t *testing.T, d *fk8s.Deployment, probeRef string) []string {
	t.Helper()
	return append([]string{"audit", "--format", "json"}, k8sArgs(d, "--probe-image", probeRef,
		"--egress-target", world.HTTP, "--dns-server", world.Address, "--timeout", "2s", "--kubeconfig", auditRBAC(t, d),
		"--host-port", strconv.Itoa(closedPort(t)), "--kubelet-port", "10250", "--metadata-target", world.HTTP,
		"--node-local-dns", net.JoinHostPort(world.Address, "53"))...)
}
