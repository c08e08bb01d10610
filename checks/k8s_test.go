package checks

import (
	"strings"
	"testing"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/report"
)

// ssebenchCluster is a correct deployment as ssebench and its Helm chart
// make it: one restricted and one open run in ssebench-runs, the proxy and
// its database in ssebench.
func ssebenchCluster() *Cluster {
	no := false
	runPod := func(name, id string) Pod {
		return Pod{Name: name, Namespace: "ssebench-runs", RunID: id, ServiceAccount: "default", Seccomp: "RuntimeDefault",
			Labels: map[string]string{"ssebench.run-id": id, "app.kubernetes.io/name": "ssebench-run", "app.kubernetes.io/managed-by": "ssebench"},
			Containers: []PodContainer{
				{Name: "task", AllowPrivilegeEscalation: &no, CapDrop: []string{"ALL"}, CapAdd: k8sTaskCaps},
				{Name: "collector", AllowPrivilegeEscalation: &no, CapDrop: []string{"ALL"}, CapAdd: k8sCollectorCaps, ReadOnlyRoot: true},
			}}
	}
	runPolicy := func(id string, open bool) Policy {
		p := Policy{Name: "ssebench-" + id, Namespace: "ssebench-runs", Labels: map[string]string{"ssebench.run-id": id},
			PodSelector: Selector{MatchLabels: map[string]string{"ssebench.run-id": id}}, Types: []string{"Ingress", "Egress"},
			Egress: []PolicyRule{
				{Peers: []Peer{{NamespaceSelector: &Selector{MatchLabels: map[string]string{k8sNamespaceLabel: "kube-system"}},
					PodSelector: &Selector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}}}},
					Ports: []PolicyPort{{Protocol: "UDP", Port: "53"}, {Protocol: "TCP", Port: "53"}}},
				{Peers: []Peer{{NamespaceSelector: &Selector{MatchLabels: map[string]string{k8sNamespaceLabel: "ssebench"}},
					PodSelector: &Selector{MatchLabels: map[string]string{"app.kubernetes.io/name": "litellm"}}}},
					Ports: []PolicyPort{{Protocol: "TCP", Port: "4000"}}},
			}}
		if open {
			p.Egress = append(p.Egress, PolicyRule{Peers: []Peer{{IPBlock: &IPBlock{CIDR: k8sOpenBlock, Except: k8sOpenExcept}}}})
		}
		return p
	}
	proxyPod := Pod{Name: "litellm-0", Namespace: "ssebench", Labels: map[string]string{"app.kubernetes.io/name": "litellm"}}
	dbPod := Pod{Name: "litellm-db-0", Namespace: "ssebench", Labels: map[string]string{"app.kubernetes.io/name": "litellm-db"}}
	return &Cluster{
		Namespace: "ssebench-runs", ProxyNamespace: "ssebench", ProxySelector: map[string]string{"app.kubernetes.io/name": "litellm"}, ProxyPort: 4000,
		RunPods:   []Pod{runPod("run-a", "a"), runPod("run-b", "b")},
		ProxyPods: []Pod{proxyPod}, DatabasePods: []Pod{dbPod},
		Policies: []Policy{runPolicy("a", false), runPolicy("b", true),
			{Name: "litellm", Namespace: "ssebench", PodSelector: Selector{MatchLabels: map[string]string{"app.kubernetes.io/name": "litellm"}},
				Types: []string{"Ingress"}, Ingress: []PolicyRule{{
					Peers: []Peer{{PodSelector: &Selector{MatchLabels: k8sWebUIPods}},
						{NamespaceSelector: &Selector{MatchLabels: map[string]string{k8sNamespaceLabel: "ssebench-runs"}}, PodSelector: &Selector{MatchLabels: k8sRunPods}}},
					Ports: []PolicyPort{{Protocol: "TCP", Port: "4000"}}}}},
			{Name: "litellm-db", Namespace: "ssebench", PodSelector: Selector{MatchLabels: k8sDatabasePods},
				Types: []string{"Ingress"}, Ingress: []PolicyRule{{
					Peers: []Peer{{PodSelector: &Selector{MatchLabels: map[string]string{"app.kubernetes.io/name": "litellm"}}}},
					Ports: []PolicyPort{{Protocol: "TCP", Port: "5432"}}}}},
		},
		Access: map[string][]Access{"ssebench-runs/default": {{Verb: "create", Resource: "pods"}}},
	}
}

// k8sRows makes every Kubernetes check of a cluster.
func k8sRows(t *testing.T, c *Cluster) map[string][]report.Check {
	t.Helper()
	in := HostInput{Dep: &Deployment{Backend: BackendKubernetes, Project: c.Namespace, Cluster: c}}
	out := map[string][]report.Check{}
	for _, ck := range registry {
		if ck.Host != nil && ck.On(BackendKubernetes) {
			out[ck.ID] = ck.Host(in)
		}
	}
	return out
}

func rowOf(rows []report.Check, target string) (report.Status, string) {
	for _, r := range rows {
		if r.Target == target {
			return r.Status, r.Observed
		}
	}
	return "", "no row"
}

func TestK8sCorrectDeploymentPasses(t *testing.T) {
	rows := k8sRows(t, ssebenchCluster())
	for _, id := range []string{K8sPolicySelected, K8sPolicyEffective, K8sPodHardening, K8sProxyIngress, K8sServiceAccount} {
		require.NotEmpty(t, rows[id], id)
		for _, r := range rows[id] {
			assert.Equal(t, report.Pass, r.Status, "%s %s: %s", id, r.Target, r.Observed)
		}
	}
	_, obs := rowOf(rows[K8sPolicyEffective], "run-b")
	assert.Contains(t, obs, "open run")
	assert.Len(t, rows[K8sProxyIngress], 2, "the proxy and its database")
}

// Each mutant of the correct deployment fails (or warns) the check that
// owns the property, naming what widened it.
func TestK8sMutants(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate       func(*Cluster)
		id, target   string
		status       report.Status
		observedPart string
	}{
		"allow-all egress policy": {func(c *Cluster) {
			c.Policies = append(c.Policies, Policy{Name: "allow-all", Namespace: "ssebench-runs", Types: []string{"Egress"}, Egress: []PolicyRule{{}}})
		}, K8sPolicyEffective, "run-a", report.Fail, "allow-all: allows every destination"},
		"run without its policy":            {func(c *Cluster) { c.Policies = c.Policies[1:] }, K8sPolicySelected, "run-a", report.Fail, "no policy of run a"},
		"run without its policy, effective": {func(c *Cluster) { c.Policies = c.Policies[1:] }, K8sPolicyEffective, "run-a", report.Fail, "no policy restricts its egress"},
		"policy without Egress":             {func(c *Cluster) { c.Policies[0].Types = []string{"Ingress"} }, K8sPolicySelected, "run-a", report.Fail, "without Egress"},
		"proxy rule without its namespace selector": {func(c *Cluster) { c.Policies[0].Egress[1].Peers[0].NamespaceSelector = nil },
			K8sPolicyEffective, "run-a", report.Fail, "in namespace ssebench-runs (neither kube-dns nor the proxy)"},
		"proxy rule on every port": {func(c *Cluster) { c.Policies[0].Egress[1].Ports = nil }, K8sPolicyEffective, "run-a", report.Fail, "every port of the proxy"},
		"open policy without the link-local exception": {func(c *Cluster) {
			c.Policies[1].Egress[2].Peers[0].IPBlock = &IPBlock{CIDR: k8sOpenBlock, Except: k8sOpenExcept[:4]}
		}, K8sPolicyEffective, "run-b", report.Fail, "reaches 169.254.0.0/16"},
		"address block for a restricted run": {func(c *Cluster) {
			c.Policies = append(c.Policies, Policy{Name: "metadata", Namespace: "ssebench-runs", Types: []string{"Egress"},
				PodSelector: Selector{MatchLabels: map[string]string{"ssebench.run-id": "a"}},
				Egress:      []PolicyRule{{Peers: []Peer{{IPBlock: &IPBlock{CIDR: "169.254.169.254/32"}}}}}})
		}, K8sPolicyEffective, "run-a", report.Fail, "metadata: allows ipBlock 169.254.169.254/32"},
		"ingress admitted": {func(c *Cluster) {
			c.Policies = append(c.Policies, Policy{Name: "allow-in", Namespace: "ssebench-runs", Types: []string{"Ingress"}, Ingress: []PolicyRule{{}}})
		}, K8sPolicyEffective, "run-a", report.Fail, "allow-in: admits every source"},
		"token mounted":        {func(c *Cluster) { c.RunPods[0].TokenMounted = true }, K8sPodHardening, "run-a", report.Fail, "token is mounted"},
		"host network":         {func(c *Cluster) { c.RunPods[0].HostNetwork = true }, K8sPodHardening, "run-a", report.Fail, "host network"},
		"privilege escalation": {func(c *Cluster) { c.RunPods[0].Containers[0].AllowPrivilegeEscalation = nil }, K8sPodHardening, "run-a", report.Fail, "privilege escalation"},
		"extra capability": {func(c *Cluster) {
			c.RunPods[0].Containers[0].CapAdd = append(c.RunPods[0].Containers[0].CapAdd, "NET_ADMIN")
		}, K8sPodHardening, "run-a", report.Fail, "adds NET_ADMIN"},
		"service links":   {func(c *Cluster) { c.RunPods[0].ServiceLinks = true }, K8sPodHardening, "run-a", report.Warn, "service links"},
		"may create pods": {func(c *Cluster) { c.Access["ssebench-runs/default"][0].Allowed = true }, K8sServiceAccount, "serviceaccount ssebench-runs/default", report.Fail, "may create pods"},
		"may list pods": {func(c *Cluster) {
			c.Access["ssebench-runs/default"] = []Access{{Verb: "list", Resource: "pods", Allowed: true}}
		}, K8sServiceAccount, "serviceaccount ssebench-runs/default", report.Warn, "may list pods"},
		"proxy open to all": {func(c *Cluster) { c.Policies = c.Policies[:2] }, K8sProxyIngress, "litellm-0", report.Warn, "no ingress policy"},
		"proxy rule without runs' namespace": {func(c *Cluster) { c.Policies[2].Ingress[0].Peers[1].NamespaceSelector = &Selector{} },
			K8sProxyIngress, "litellm-0", report.Warn, "admits namespaces {} (everything)"},
	} {
		t.Run(name, func(t *testing.T) {
			c := ssebenchCluster()
			tc.mutate(c)
			st, obs := rowOf(k8sRows(t, c)[tc.id], tc.target)
			assert.Equal(t, tc.status, st, obs)
			assert.Contains(t, obs, tc.observedPart)
		})
	}
}

func TestSelector(t *testing.T) {
	s := Selector{MatchLabels: map[string]string{"a": "1"}, Requirements: []Requirement{{Key: "b", Operator: "In", Values: []string{"2"}}}}
	assert.True(t, s.Matches(map[string]string{"a": "1", "b": "2", "c": "3"}))
	assert.False(t, s.Matches(map[string]string{"a": "1"}))
	assert.True(t, s.Requires("b", "2"))
	assert.False(t, s.Requires("c", "3"))
	assert.True(t, Selector{}.Matches(nil), "an empty selector selects everything")
	assert.False(t, Selector{Requirements: []Requirement{{Key: "x", Operator: "Bogus"}}}.Matches(nil))
	assert.True(t, Selector{Requirements: []Requirement{{Key: "x", Operator: "DoesNotExist"}}}.Matches(nil))
	assert.False(t, Selector{Requirements: []Requirement{{Key: "x", Operator: "NotIn", Values: []string{"1"}}}}.Matches(map[string]string{"x": "1"}))
}

func TestWiderBlock(t *testing.T) {
	assert.Empty(t, widerBlock(IPBlock{CIDR: "0.0.0.0/0", Except: k8sOpenExcept}))
	assert.Empty(t, widerBlock(IPBlock{CIDR: "8.8.8.0/24"}), "public only")
	assert.Contains(t, widerBlock(IPBlock{CIDR: "10.1.0.0/16"}), "10.1.0.0/16")
	assert.Empty(t, widerBlock(IPBlock{CIDR: "10.1.0.0/16", Except: []string{"10.0.0.0/8"}}))
	assert.Contains(t, widerBlock(IPBlock{CIDR: "::/0"}), "IPv6")
	assert.Contains(t, widerBlock(IPBlock{CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8"}}), "169.254.0.0/16")
}

// A namespace without run pods says so rather than passing silently.
func TestK8sNoRunsIsSkip(t *testing.T) {
	c := ssebenchCluster()
	c.RunPods = nil
	rows := k8sRows(t, c)[K8sPolicySelected]
	require.Len(t, rows, 1)
	assert.Equal(t, report.Skip, rows[0].Status)
	assert.Contains(t, rows[0].Message, "no live run pod")
}

// On a cluster an outside name that resolves through kube-dns is the
// documented state: a warning naming the channel; on Docker it fails.
func TestClusterDNSRule(t *testing.T) {
	resolved := probes.Result{Kind: probes.KindDNS, Outcome: probes.Address, Addresses: []string{"203.0.113.9"}}
	assert.Equal(t, report.Warn, judgeTask(RuleClusterDNS, resolved))
	assert.Equal(t, report.Fail, judgeTask(RuleNoAddress, resolved))
	assert.Equal(t, report.Pass, judgeTask(RuleClusterDNS, probes.Result{Kind: probes.KindDNS, Outcome: probes.DNSRefused}))

	in := PlanInput{Config: Config{ExternalNames: []string{"example.com"}}.WithDefaults(), Canary: "c.example.com",
		Dep: &Deployment{Backend: BackendKubernetes, Cluster: ssebenchCluster(), ProxyName: "litellm.ssebench.svc.cluster.local", ProxyAddress: "10.96.0.20:4000"}}
	ps := plan(in, Vantage{Name: VantageFresh})
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.Check)
		if p.Check == DNSProxy {
			assert.Equal(t, "litellm.ssebench.svc.cluster.local", p.Tasks[0].Name)
		}
		if p.Check == DNSExternal {
			j := p.Judge(Results{{Result: resolved}})
			assert.Equal(t, report.Warn, j.Status, "an outside name through kube-dns warns")
		}
	}
	assert.Contains(t, ids, DNSExternal)
	assert.Contains(t, ids, EgressHost)
	assert.Contains(t, ids, EgressProxyForward)
	assert.NotContains(t, ids, IsolationProjects, "no Compose projects on a cluster")
}

// egress.host from a probe pod: the nodes' addresses on the host and
// kubelet ports and a node-local DNS cache may answer (a warning: the
// policy model lets a pod reach its node), cloud metadata must not; the API
// server warns, and fails once run pods hold a token to use on it.
func TestClusterHostsPlan(t *testing.T) {
	c := ssebenchCluster()
	c.Nodes = []Node{{Name: "n1", Addresses: []string{"10.0.0.5", "198.51.100.5"}}, {Name: "n2", Addresses: []string{"10.0.0.6"}}}
	c.APIServer = "10.96.0.1:443"
	cfg := Config{HostPorts: []int{22}, KubeletPorts: []int{10250}, MetadataTargets: []string{"169.254.169.254:80"},
		NodeLocalDNS: []string{"169.254.20.10:53"}}.WithDefaults()
	plans := func(c *Cluster) map[string]Planned {
		out := map[string]Planned{}
		for _, p := range plan(PlanInput{Config: cfg, Dep: &Deployment{Backend: BackendKubernetes, Cluster: c}}, Vantage{Name: VantageFresh}) {
			if p.Check == EgressHost {
				out[strings.Fields(p.Target)[0]] = p
			}
		}
		return out
	}
	reached := func(p Planned) report.Status {
		var rs Results
		for _, tk := range p.Tasks {
			rs = append(rs, TaskResult{Task: tk, Result: probes.Result{Kind: probes.KindTCP, Outcome: probes.Connected}})
		}
		return p.Judge(rs).Status
	}
	ps := plans(c)
	require.Len(t, ps, 4, "nodes, API server, metadata, node-local DNS: %v", ps)
	var addrs []string
	for _, tk := range ps["nodes"].Tasks {
		addrs = append(addrs, tk.Address)
	}
	assert.ElementsMatch(t, []string{"10.0.0.5:22", "10.0.0.5:10250", "198.51.100.5:22", "198.51.100.5:10250", "10.0.0.6:22", "10.0.0.6:10250"}, addrs)
	assert.Equal(t, report.Warn, reached(ps["nodes"]))
	assert.Equal(t, report.Warn, reached(ps["API"]))
	assert.Equal(t, report.Fail, reached(ps["cloud"]))
	assert.Equal(t, report.Warn, reached(ps["node-local"]))
	assert.Equal(t, report.Pass, ps["cloud"].Judge(Results{{Task: ps["cloud"].Tasks[0],
		Result: probes.Result{Kind: probes.KindTCP, Outcome: probes.Timeout}}}).Status)

	c.RunPods[0].TokenMounted = true
	assert.Equal(t, report.Fail, reached(plans(c)["API"]), "a token to use on a reachable API server")
}

// isolation.runs on a cluster: every placed run pod is tried on the
// daemon's port and the servers the listener rules name, from the probe
// pod; a run pod's policy admits no ingress, so anything reached fails.
func TestRunPodsPlan(t *testing.T) {
	c := ssebenchCluster()
	c.RunPods[0].IPs = []string{"10.244.0.7"}
	in := PlanInput{Config: Config{}.WithDefaults(), Dep: &Deployment{Backend: BackendKubernetes, Cluster: c}}
	ps := byCheck(plan(in, Vantage{Name: VantageFresh}), IsolationRuns)
	require.Len(t, ps, 1, "run-b has no address yet")
	assert.Equal(t, "run pod run-a", ps[0].Target)
	var addrs []string
	for _, tk := range ps[0].Tasks {
		addrs = append(addrs, tk.Address)
	}
	assert.Equal(t, []string{"10.244.0.7:4263", "10.244.0.7:4096", "10.244.0.7:4098", "10.244.0.7:3000"}, addrs)
	rs := Results{{Task: ps[0].Tasks[0], Result: probes.Result{Kind: probes.KindTCP, Outcome: probes.Connected}}}
	j := ps[0].Judge(rs)
	assert.Equal(t, report.Fail, j.Status)
	assert.Contains(t, j.Message, "admit no ingress")
	rs[0].Result.Outcome = probes.Timeout
	assert.Equal(t, report.Pass, ps[0].Judge(rs).Status)

	assert.Empty(t, byCheck(plan(PlanInput{Config: in.Config, Dep: &Deployment{Backend: BackendDocker}}, Vantage{Name: VantageFresh}), IsolationRuns),
		"on Docker, from inside the runs")

	// The daemons, at their pods' addresses, from the probe pod.
	in.Dep.Runs = []Container{{ID: "ssebench-runs/run-a", Name: "run-a", RunID: "a", Running: true},
		{ID: "ssebench-runs/run-b", Name: "run-b", RunID: "b", Running: true}}
	var daemons []string
	for _, p := range byCheck(plan(in, Vantage{Name: VantageFresh}), DaemonReferencePatch) {
		daemons = append(daemons, p.Tasks[0].Address)
	}
	assert.Equal(t, []string{"10.244.0.7:4263"}, daemons, "run-b has no address yet")
}
