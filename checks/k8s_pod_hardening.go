package checks

import (
	"slices"
	"sort"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const K8sPodHardening = "k8s.pod.hardening"

// What ssebench's run pods are given (docs/ssebench.md, "Kubernetes
// backend"): the task container these capabilities after dropping ALL, the
// collector this one only; anything more is judged with run.hardening's
// escapeCaps.
var (
	k8sTaskCaps      = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETGID", "SETUID"}
	k8sCollectorCaps = []string{"DAC_READ_SEARCH"}
	k8sCollector     = "collector"
)

var k8sPodHardening = &Check{
	ID: K8sPodHardening,
	Title: "No run pod gets a service-account token, host namespaces, host paths, privileged or escalating containers, " +
		"or capabilities beyond ssebench's; seccomp RuntimeDefault, no service links",
	From:     FromAPI,
	Remedy:   "Start runs only through `ssebench run`, which builds the pod spec hardened; remove whatever admission webhook or mutation changed it.",
	PerRun:   true,
	Backends: []string{BackendKubernetes},
	Host: func(in HostInput) []report.Check {
		return perRunPod(in, func(_ *Cluster, pod Pod) report.Check {
			row := report.Check{Target: pod.Name, Status: report.Pass, Observed: "as ssebench builds it",
				Expected: "no token, no host namespaces or paths, unprivileged, no escalation, ssebench's capabilities, seccomp RuntimeDefault, no service links"}
			judgeFindings(&row, podFindings(pod), "the run pod has more power than an agent needs")
			return row
		})
	},
}

func podFindings(pod Pod) []finding {
	var fs []finding
	add := func(s report.Status, what string) { fs = append(fs, finding{s, what}) }
	if pod.TokenMounted {
		add(report.Fail, "a service-account token is mounted ("+pod.ServiceAccount+"): the agent can call the API server as it")
	}
	for _, ns := range []struct {
		on   bool
		name string
	}{{pod.HostNetwork, "host network"}, {pod.HostPID, "host PID namespace"}, {pod.HostIPC, "host IPC namespace"}} {
		if ns.on {
			add(report.Fail, ns.name)
		}
	}
	for _, p := range pod.HostPaths {
		add(report.Fail, "hostPath volume "+p)
	}
	if pod.ServiceLinks {
		add(report.Warn, "service links on: every Service's address is in its environment")
	}
	for _, ct := range pod.Containers {
		name := "container " + ct.Name + ": "
		if ct.Privileged {
			add(report.Fail, name+"privileged")
		}
		if ct.AllowPrivilegeEscalation == nil || *ct.AllowPrivilegeEscalation {
			add(report.Fail, name+"privilege escalation allowed")
		}
		switch seccomp := firstNonEmpty(ct.Seccomp, pod.Seccomp); seccomp {
		case "RuntimeDefault", "Localhost":
		case "Unconfined":
			add(report.Fail, name+"seccomp Unconfined")
		default:
			add(report.Warn, name+"no seccomp profile set (the runtime's default may be unconfined)")
		}
		allowed := k8sTaskCaps
		if ct.Name == k8sCollector {
			allowed = k8sCollectorCaps
		}
		if !slices.ContainsFunc(ct.CapDrop, func(c string) bool { return strings.EqualFold(c, "ALL") }) {
			add(report.Warn, name+"keeps the runtime's default capabilities (does not drop ALL)")
		}
		var extra, escape []string
		for _, cp := range ct.CapAdd {
			cp = strings.TrimPrefix(strings.ToUpper(cp), "CAP_")
			switch {
			case slices.Contains(allowed, cp):
			case escapeCaps[cp]:
				escape = append(escape, cp)
			default:
				extra = append(extra, cp)
			}
		}
		sort.Strings(escape)
		sort.Strings(extra)
		if len(escape) > 0 {
			add(report.Fail, name+"adds "+strings.Join(escape, ", "))
		}
		if len(extra) > 0 {
			add(report.Warn, name+"adds "+strings.Join(extra, ", ")+" beyond ssebench's")
		}
	}
	return fs
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
