package checks

import (
	"fmt"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const K8sPolicySelected = "k8s.policy.selected"

// ssebench labels a run's NetworkPolicy, as every object of the run, with
// its run ID (docs/ssebench.md, "Kubernetes backend").
const k8sLabelRunID = "ssebench.run-id"

var k8sPolicySelected = &Check{
	ID:       K8sPolicySelected,
	Title:    "Every run pod is selected by its own run's NetworkPolicy, with both Ingress and Egress in its policyTypes",
	From:     FromAPI,
	Remedy:   "Start runs only through `ssebench run` on the Kubernetes backend, which creates the run's policy with its Job; do not delete or edit it while the run lives.",
	PerRun:   true,
	Backends: []string{BackendKubernetes},
	Host: func(in HostInput) []report.Check {
		c := in.Dep.Cluster
		if c == nil {
			return nil
		}
		if len(c.RunPods) == 0 {
			// Said, so that a namespace without runs is not read as checked.
			return []report.Check{{Target: c.Namespace, Status: report.Skip,
				Message: "no live run pod in the namespace: the run policies are judged while runs live"}}
		}
		return perRunPod(in, func(c *Cluster, pod Pod) report.Check {
			row := report.Check{Target: pod.Name, Expected: "a policy labelled with the pod's run ID selects it, policyTypes [Ingress, Egress]"}
			row.Status, row.Observed = ownPolicy(c, pod)
			if row.Status != report.Pass {
				row.Message = "without its own policy the run's traffic is whatever the other policies leave: with none, every address"
			}
			return row
		})
	},
}

// ownPolicy judges whether the run pod's own policy selects it whole.
func ownPolicy(c *Cluster, pod Pod) (report.Status, string) {
	if pod.RunID == "" {
		return report.Fail, "the pod has no " + k8sLabelRunID + " label"
	}
	var labelled []string
	for _, p := range c.Policies {
		if p.Namespace != pod.Namespace || p.Labels[k8sLabelRunID] != pod.RunID {
			continue
		}
		if !p.Selects(pod) {
			labelled = append(labelled, fmt.Sprintf("%s selects %s, not this pod", p.Name, p.PodSelector))
			continue
		}
		var missing []string
		for _, t := range []string{"Ingress", "Egress"} {
			if !p.Has(t) {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			return report.Fail, fmt.Sprintf("%s selects it without %s in policyTypes", p.Name, strings.Join(missing, " or "))
		}
		return report.Pass, p.Name + " selects it, policyTypes [Ingress, Egress]"
	}
	if len(labelled) > 0 {
		return report.Fail, strings.Join(labelled, "; ")
	}
	return report.Fail, "no policy of run " + pod.RunID + " in namespace " + pod.Namespace
}
