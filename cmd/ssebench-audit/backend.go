package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/ssebench-audit/ssebench-audit/backend/docker"
	"github.com/ssebench-audit/ssebench-audit/backend/kubernetes"
	"github.com/ssebench-audit/ssebench-audit/checks"
)

// The backends --backend chooses from.
const (
	backendAuto       = "auto"
	backendDocker     = checks.BackendDocker
	backendKubernetes = checks.BackendKubernetes
)

// backendFlags choose and configure the backend.
type backendFlags struct {
	name   string
	docker docker.Options
	k8s    kubernetes.Options
}

func (f *backendFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.name, "backend", backendAuto, "where ssebench runs: docker, kubernetes, or auto (Docker when an engine answers, else Kubernetes when a kubeconfig or in-cluster config exists)")
	fl.StringVar(&f.docker.ProbeImage, "probe-image", "", "probe image to use instead of building one from this executable (Kubernetes: one the cluster pulls, see `probe-image push`; without it, no probe pod)")
	fl.StringVar(&f.docker.ProbeDNS, "probe-dns", "", "upstream resolver of the fresh-run probe (as docker run --dns); for test deployments with their own internet stand-in")
	fl.StringVar(&f.k8s.Kubeconfig, "kubeconfig", "", "Kubernetes: the kubeconfig (default $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fl.StringVar(&f.k8s.Context, "context", "", "Kubernetes: the kubeconfig context (default the current one)")
	fl.StringVar(&f.k8s.Namespace, "namespace", "", "Kubernetes: the runs' namespace (default $"+kubernetes.EnvNamespace+", else the context's)")
	fl.StringVar(&f.k8s.ProxyNamespace, "proxy-namespace", "", "Kubernetes: the proxy's namespace (default $"+kubernetes.EnvProxyNamespace+", else the runs')")
	fl.StringVar(&f.k8s.ProxySelector, "proxy-selector", "", "Kubernetes: the proxy pods' labels (default $"+kubernetes.EnvProxySelector+", else "+kubernetes.DefaultProxySelector+")")
}

// validate refuses what cannot be right before anything is asked.
func (f *backendFlags) validate() error {
	switch f.name {
	case backendAuto, backendDocker, backendKubernetes:
	default:
		return fmt.Errorf("unknown --backend %q (known: auto, docker, kubernetes)", f.name)
	}
	return f.docker.Validate()
}

// choose resolves auto: Docker when its engine answers within a moment,
// else Kubernetes when there is a cluster to ask, else Docker (whose error
// then says what is missing).
func (f *backendFlags) choose(ctx context.Context) string {
	if f.name != backendAuto {
		return f.name
	}
	if api, err := dockerClient(); err == nil {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := api.Ping(pctx)
		cancel()
		api.Close()
		if err == nil {
			return backendDocker
		}
	}
	if f.k8s.Kubeconfig != "" || os.Getenv("KUBECONFIG") != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return backendKubernetes
	}
	if home, err := os.UserHomeDir(); err == nil {
		if _, err := os.Stat(filepath.Join(home, ".kube", "config")); err == nil {
			return backendKubernetes
		}
	}
	return backendDocker
}

// open connects to the chosen backend; close releases it.
func (f *backendFlags) open(ctx context.Context) (b checks.Backend, close func(), err error) {
	switch f.choose(ctx) {
	case backendKubernetes:
		f.k8s.ProbeImage = f.docker.ProbeImage // on a cluster, from a registry
		opts, api, err := kubernetes.Config(f.k8s)
		if err != nil {
			return nil, nil, err
		}
		kb, err := kubernetes.New(api, opts)
		if err != nil {
			return nil, nil, err
		}
		return kb, func() {}, nil
	default:
		api, err := dockerClient()
		if err != nil {
			return nil, nil, err
		}
		return docker.New(api, f.docker), func() { api.Close() }, nil
	}
}
