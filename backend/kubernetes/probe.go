package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// LabelProbe marks everything an audit makes in a cluster, with its audit
// ID: the probe pod, its plan and its policy. Close deletes by it.
const LabelProbe = "ssebench-audit.probe"

// enforcementWait is how long a probe pod waits before its plan: the
// policy that selects it is enforced a moment after it starts (the
// enforcer learns a pod's address from its status), and a probe sent
// before would see the network unfenced.
const enforcementWait = 3 * time.Second

// Bounds on what the audit reads back from a probe pod.
const maxProbeLog = 4 << 20

// session is one audit's hold on the cluster.
type session struct {
	b       *Backend
	auditID string
	timeout time.Duration
	n       atomic.Int32

	binOnce sync.Once // the probe's executable, read once: what goes into run pods
	bin     []byte
	binErr  error

	execOnce sync.Once // whether the audit may exec into run pods, asked once
	execErr  error
}

// CanProbe: a cluster pulls its images, so probes need one from a registry.
func (b *Backend) CanProbe() bool { return b.opts.ProbeImage != "" }

// CanJoinRuns: a pod's network namespace is its own; a run pod's network
// is probed only from the exec into it (InRun).
func (b *Backend) CanJoinRuns() bool { return false }

func (b *Backend) Start(auditID string, timeout time.Duration) checks.Session {
	return &session{b: b, auditID: auditID, timeout: timeout}
}

// Probe runs plan in a probe pod that stands where a run stands: in the
// runs' namespace, labelled as ssebench labels a run, fenced by the policy
// ssebench would create for it. Pod, plan and policy are deleted on every
// path.
func (s *session) Probe(ctx context.Context, ns string, v checks.Vantage, plan probes.Plan, onStart func()) (probes.Report, error) {
	if s.b.opts.ProbeImage == "" {
		return probes.Report{}, errNoProbes
	}
	if v.Run != nil {
		return probes.Report{}, errors.New("probes from a live run's pod are not placed on Kubernetes yet")
	}
	name := fmt.Sprintf("sba-probe-%s-%d", s.auditID, s.n.Add(1))
	planJSON, err := json.Marshal(plan)
	if err != nil {
		return probes.Report{}, err
	}
	mine := map[string]string{LabelProbe: s.auditID}
	defer s.remove(ctx, ns, name)
	api := s.b.api
	if _, err := api.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: mine}, Data: map[string]string{"plan.json": string(planJSON)},
	}, metav1.CreateOptions{}); err != nil {
		return probes.Report{}, fmt.Errorf("creating the probe's plan: %s", oneLine(err))
	}
	if _, err := api.NetworkingV1().NetworkPolicies(ns).Create(ctx, s.b.runPolicy(name, mine), metav1.CreateOptions{}); err != nil {
		return probes.Report{}, fmt.Errorf("creating the probe's policy: %s", oneLine(err))
	}
	if _, err := api.CoreV1().Pods(ns).Create(ctx, s.b.probePod(name, mine), metav1.CreateOptions{}); err != nil {
		return probes.Report{}, fmt.Errorf("creating the probe pod: %s", oneLine(err))
	}
	limit := 2*time.Duration(plan.TimeoutMS)*time.Millisecond + enforcementWait + 90*time.Second // scheduling, a pull
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	started := false
	for {
		p, err := api.CoreV1().Pods(ns).Get(wctx, name, metav1.GetOptions{})
		switch {
		case ctx.Err() != nil:
			return probes.Report{}, fmt.Errorf("interrupted: %w", ctx.Err())
		case wctx.Err() != nil:
			return probes.Report{}, fmt.Errorf("the probe pod did not finish within %s (%s)", limit, podState(p))
		case err != nil:
			return probes.Report{}, fmt.Errorf("watching the probe pod: %s", oneLine(err))
		}
		if !started && p.Status.Phase != corev1.PodPending {
			started = true
			if onStart != nil {
				onStart()
			}
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			break
		}
		select {
		case <-wctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
	limitBytes := int64(maxProbeLog)
	logs, err := api.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{LimitBytes: &limitBytes}).DoRaw(ctx)
	if err != nil {
		return probes.Report{}, fmt.Errorf("reading the probe's report: %s", oneLine(err))
	}
	rep, err := probes.ParseReport(bytes.NewReader(logs), maxProbeLog)
	if err != nil {
		return probes.Report{}, fmt.Errorf("reading the probe's report: %v", err)
	}
	return rep, nil
}

// podState says why a pod is where it is, in a few words.
func podState(p *corev1.Pod) string {
	if p == nil {
		return "unknown"
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Waiting != nil {
			return string(p.Status.Phase) + ": " + c.State.Waiting.Reason
		}
	}
	return string(p.Status.Phase)
}

// runPolicy is the NetworkPolicy ssebench creates for a restricted run
// (docs/ssebench.md, "Kubernetes backend"), for the probe's own run ID.
func (b *Backend) runPolicy(runID string, labels map[string]string) *netv1.NetworkPolicy {
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	dns, proxy := intstr.FromInt32(53), intstr.FromInt32(int32(b.opts.ProxyPort))
	ns := func(name string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": name}}
	}
	proxyNS := b.opts.ProxyNamespace
	if proxyNS == "" {
		proxyNS = b.opts.Namespace
	}
	l := map[string]string{"ssebench.run-id": runID}
	for k, v := range labels {
		l[k] = v
	}
	return &netv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: runID, Labels: l},
		Spec: netv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"ssebench.run-id": runID}},
			PolicyTypes: []netv1.PolicyType{netv1.PolicyTypeIngress, netv1.PolicyTypeEgress},
			Egress: []netv1.NetworkPolicyEgressRule{
				{To: []netv1.NetworkPolicyPeer{{NamespaceSelector: ns("kube-system"),
					PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}}}},
					Ports: []netv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}, {Protocol: &tcp, Port: &dns}}},
				{To: []netv1.NetworkPolicyPeer{{NamespaceSelector: ns(proxyNS),
					PodSelector: &metav1.LabelSelector{MatchLabels: b.proxySel}}},
					Ports: []netv1.NetworkPolicyPort{{Protocol: &tcp, Port: &proxy}}},
			},
		},
	}
}

// probePod is a pod labelled and hardened as ssebench's run pods are, with
// its own run ID, that runs the probe image on the plan.
func (b *Backend) probePod(name string, labels map[string]string) *corev1.Pod {
	no := false
	l := map[string]string{"ssebench.run-id": name, LabelRunName: RunName, "app.kubernetes.io/managed-by": "ssebench"}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: &no, EnableServiceLinks: &no,
			SecurityContext: &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "probe", Image: b.opts.ProbeImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Args: []string{"--plan", "/plan/plan.json", "--after", enforcementWait.String()},
				SecurityContext: &corev1.SecurityContext{Privileged: &no, AllowPrivilegeEscalation: &no,
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "plan", MountPath: "/plan", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: "plan", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}},
		},
	}
}

// remove deletes one probe's pod, policy and plan, on a context Ctrl-C does
// not cancel; Close sweeps what this misses.
func (s *session) remove(ctx context.Context, ns, name string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	_ = s.b.api.CoreV1().Pods(ns).Delete(rctx, name, del)
	_ = s.b.api.NetworkingV1().NetworkPolicies(ns).Delete(rctx, name, del)
	_ = s.b.api.CoreV1().ConfigMaps(ns).Delete(rctx, name, del)
}

func (s *session) ProbeImage() (string, string) { return s.b.opts.ProbeImage, "" }

// Close deletes everything labelled with this audit's ID in the runs'
// namespace, and says what it could not.
func (s *session) Close(ctx context.Context, _ bool) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return sweep(rctx, s.b, s.b.opts.Namespace, LabelProbe+"="+s.auditID)
}

// Sweep deletes what audits left in the runs' namespace (a killed audit
// could not): every probe pod, plan and policy labelled by an audit, or by
// the one named; it returns how many objects it deleted.
func (b *Backend) Sweep(ctx context.Context, auditID string) (int, error) {
	sel := LabelProbe
	if auditID != "" {
		sel += "=" + auditID
	}
	ns := b.opts.Namespace
	list := metav1.ListOptions{LabelSelector: sel}
	n := 0
	if l, err := b.api.CoreV1().Pods(ns).List(ctx, list); err == nil {
		n += len(l.Items)
	}
	if l, err := b.api.NetworkingV1().NetworkPolicies(ns).List(ctx, list); err == nil {
		n += len(l.Items)
	}
	if l, err := b.api.CoreV1().ConfigMaps(ns).List(ctx, list); err == nil {
		n += len(l.Items)
	}
	return n, sweep(ctx, b, ns, sel)
}

// sweep deletes the probe pods, policies and plans the selector matches.
func sweep(ctx context.Context, b *Backend, ns, selector string) error {
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	sel := metav1.ListOptions{LabelSelector: selector}
	var errs []error
	for what, f := range map[string]func() error{
		"pods":            func() error { return b.api.CoreV1().Pods(ns).DeleteCollection(ctx, del, sel) },
		"NetworkPolicies": func() error { return b.api.NetworkingV1().NetworkPolicies(ns).DeleteCollection(ctx, del, sel) },
		"ConfigMaps":      func() error { return b.api.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, del, sel) },
	} {
		if err := f(); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting the audit's %s in %s: %s", what, ns, oneLine(err)))
		}
	}
	return errors.Join(errs...)
}
