// Package kubernetes is the audit's Kubernetes backend: it finds ssebench's
// runs on a cluster (pods of Jobs labelled app.kubernetes.io/name=
// ssebench-run, the NetworkPolicies that select them, the proxy's pods and
// policies) through typed client-go clients, and asks the API server's
// authorizer what the runs' service accounts may do. It reads; it creates
// nothing but SubjectAccessReviews, which the API server does not keep.
package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

// ssebench's defaults and the environment it reads them from (docs/ssebench.md,
// "Kubernetes backend"): the audit reads the same, so that on the host that
// runs ssebench it finds what ssebench made without flags.
const (
	EnvNamespace      = "SSEBENCH_K8S_NAMESPACE"
	EnvProxyNamespace = "SSEBENCH_K8S_PROXY_NAMESPACE"
	EnvProxySelector  = "SSEBENCH_K8S_PROXY_SELECTOR"
	EnvProxyURL       = "SSEBENCH_K8S_PROXY_URL"

	DefaultProxySelector = "app.kubernetes.io/name=litellm"
	DefaultProxyPort     = 4000

	// LabelRunName is on every object of a run.
	LabelRunName = "app.kubernetes.io/name"
	RunName      = "ssebench-run"
)

// Options say which cluster and which deployment.
type Options struct {
	Kubeconfig     string // "" for $KUBECONFIG, else ~/.kube/config, else in-cluster
	Context        string
	Namespace      string // the runs' namespace
	ProxyNamespace string
	ProxySelector  string // a label selector, as ssebench's
	ProxyPort      int
	// ProbeImage is the probe image in a registry the cluster pulls from
	// (`probe-image push`); without it no probe pod is placed.
	ProbeImage string
	// Exec execs into run pods (the in-container checks); Config makes it
	// from the kubeconfig.
	Exec Executor
}

// Backend audits the ssebench runs of one cluster.
type Backend struct {
	api      k8s.Interface
	opts     Options
	proxySel map[string]string
}

var _ checks.Backend = (*Backend)(nil)

// Config completes the options from ssebench's environment and the
// kubeconfig, and returns the options with a client for the cluster.
func Config(opts Options) (Options, k8s.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if opts.Kubeconfig != "" {
		rules.ExplicitPath = opts.Kubeconfig
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.Context})
	rest, err := loader.ClientConfig()
	if err != nil {
		return opts, nil, fmt.Errorf("kubeconfig: %s", oneLine(err))
	}
	rest.Timeout = 30 * time.Second // every API call is bounded
	if opts.Namespace == "" {
		opts.Namespace = os.Getenv(EnvNamespace)
	}
	if opts.Namespace == "" {
		if opts.Namespace, _, err = loader.Namespace(); err != nil || opts.Namespace == "" {
			opts.Namespace = "default"
		}
	}
	if opts.ProxyNamespace == "" {
		opts.ProxyNamespace = os.Getenv(EnvProxyNamespace)
	}
	if opts.ProxySelector == "" {
		opts.ProxySelector = os.Getenv(EnvProxySelector)
	}
	if opts.ProxySelector == "" {
		opts.ProxySelector = DefaultProxySelector
	}
	if opts.ProxyPort == 0 {
		opts.ProxyPort = proxyPortFromURL(os.Getenv(EnvProxyURL))
	}
	api, err := k8s.NewForConfig(rest)
	if err != nil {
		return opts, nil, err
	}
	opts.Exec = restExecutor(api, rest)
	return opts, api, nil
}

// proxyPortFromURL is the port of ssebench's proxy URL, 4000 without one.
func proxyPortFromURL(raw string) int {
	if u, err := url.Parse(raw); err == nil && u.Port() != "" {
		if p, err := strconv.Atoi(u.Port()); err == nil {
			return p
		}
	}
	return DefaultProxyPort
}

// New makes a backend on a cluster's API; opts as Config completed them.
func New(api k8s.Interface, opts Options) (*Backend, error) {
	sel, err := labels.ConvertSelectorToLabelsMap(opts.ProxySelector)
	if err != nil {
		return nil, fmt.Errorf("invalid --proxy-selector %q: %s", opts.ProxySelector, oneLine(err))
	}
	if opts.ProxyPort <= 0 || opts.ProxyPort > 65535 {
		return nil, fmt.Errorf("invalid proxy port %d", opts.ProxyPort)
	}
	return &Backend{api: api, opts: opts, proxySel: sel}, nil
}

func (b *Backend) Name() string { return checks.BackendKubernetes }

// Namespace is the runs' namespace the backend audits by default.
func (b *Backend) Namespace() string { return b.opts.Namespace }

func (b *Backend) Engine(ctx context.Context) (checks.Engine, error) {
	v, err := b.api.Discovery().ServerVersion()
	if err != nil {
		return checks.Engine{}, errors.New(oneLine(err))
	}
	return checks.Engine{Version: v.GitVersion, APIVersion: v.Major + "." + v.Minor}, nil
}

// EngineID names the cluster: the UID of its kube-system namespace, which
// lives as long as the cluster does.
func (b *Backend) EngineID(ctx context.Context) (string, error) {
	ns, err := b.api.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return string(ns.UID), nil
}

// Projects is the runs' namespace: a cluster's ssebench deployment is one.
func (b *Backend) Projects(context.Context) ([]string, error) {
	return []string{b.opts.Namespace}, nil
}

// FindRun: the in-flight audit of one run is not made on Kubernetes yet.
func (b *Backend) FindRun(context.Context, string, string) (*checks.Container, error) {
	return nil, nil
}

func (b *Backend) Placement(string, checks.Vantage) checks.Placement { return checks.Placement{} }

// Leftovers: the backend makes nothing that outlives an audit.
func (b *Backend) Leftovers(context.Context, time.Duration) int { return 0 }

var errNoProbes = errors.New("no --probe-image: probes are placed on a cluster only from an image it pulls (`ssebench-audit probe-image push`)")

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

func (b *Backend) Changes(context.Context, string) (<-chan checks.Change, error) {
	return nil, errors.New("following changes is not done on Kubernetes yet")
}
