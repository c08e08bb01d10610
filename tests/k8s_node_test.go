package tests

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ssebench-audit/ssebench-audit/checks"
	fk8s "github.com/ssebench-audit/ssebench-audit/fixtures/k8s"
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
