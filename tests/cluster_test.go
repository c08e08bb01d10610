package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The test cluster (cluster/*.sh): a real etcd and kube-apiserver on
// loopback, built from the module proxy and cached (make cluster-build).
var (
	kubeconfig string
	kubeAPI    k8s.Interface
)

// startCluster starts the test cluster's control plane, or takes the one
// `make cluster` left running; stop stops only what it started.
func startCluster(ctx context.Context) (stop func() error, err error) {
	kubeconfig, err = filepath.Abs("../bin/cluster/kubeconfig")
	if err != nil {
		return nil, err
	}
	stop = func() error { return nil }
	if api, err := clusterClient(); err == nil {
		if _, err := api.Discovery().ServerVersion(); err == nil {
			kubeAPI = api
			return stop, nil // `make cluster` left it up: it stays
		}
	}
	for _, script := range []string{"../cluster/build.sh", "../cluster/up.sh"} {
		cmd := exec.CommandContext(ctx, script)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %v\n%s", script, err, out)
		}
	}
	stop = func() error {
		if out, err := exec.Command("../cluster/down.sh").CombinedOutput(); err != nil {
			return fmt.Errorf("cluster/down.sh: %v\n%s", err, out)
		}
		return nil
	}
	if kubeAPI, err = clusterClient(); err != nil {
		return nil, errors.Join(err, stop())
	}
	return stop, nil
}

func clusterClient() (k8s.Interface, error) {
	if _, err := os.Stat(kubeconfig); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 30 * time.Second
	return k8s.NewForConfig(cfg)
}
