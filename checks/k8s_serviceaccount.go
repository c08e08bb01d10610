package checks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const K8sServiceAccount = "k8s.serviceaccount"

// K8sAccessQuestions are what the audit asks the API server's authorizer
// about each run pod's service account, in the runs' namespace: what may
// break a run out (fail) and what only tells it about the cluster (warn).
// The backend asks them; nothing here calls the API.
var K8sAccessQuestions = []struct {
	Verb, Resource string
	Escape         bool // allowed: fail
}{
	{"create", "pods", true},
	{"create", "pods/exec", true},
	{"create", "jobs", true},
	{"get", "secrets", true},
	{"list", "secrets", true},
	{"create", "networkpolicies", true},
	{"delete", "networkpolicies", true},
	{"patch", "networkpolicies", true},
	{"list", "pods", false},
	{"get", "configmaps", false},
	{"list", "services", false},
	{"list", "networkpolicies", false},
}

var k8sServiceAccount = &Check{
	ID:       K8sServiceAccount,
	Title:    "The run pods' service account may do nothing: not create pods, read secrets or change policies",
	From:     FromAPI,
	Remedy:   "Remove the RoleBindings and ClusterRoleBindings that grant the run pods' service account anything; ssebench's runs need no API access.",
	PerRun:   true,
	Backends: []string{BackendKubernetes},
	Host: func(in HostInput) []report.Check {
		c := in.Dep.Cluster
		if c == nil {
			return nil
		}
		accounts := map[string]bool{}
		for _, pod := range c.RunPods {
			accounts[pod.Namespace+"/"+firstNonEmpty(pod.ServiceAccount, "default")] = true
		}
		names := make([]string, 0, len(accounts))
		for a := range accounts {
			names = append(names, a)
		}
		sort.Strings(names)
		var out []report.Check
		for _, sa := range names {
			row := report.Check{Target: "serviceaccount " + sa, Status: report.Pass, Expected: "nothing allowed",
				Observed: fmt.Sprintf("none of %d questions allowed", len(K8sAccessQuestions))}
			if c.AccessErr != "" {
				row.Status, row.Observed = report.Error, c.AccessErr
				row.Message = "the audit could not ask the authorizer (it needs create on subjectaccessreviews)"
				out = append(out, row)
				continue
			}
			var escape, other []string
			for _, a := range c.Access[sa] {
				if !a.Allowed {
					continue
				}
				q := a.Verb + " " + a.Resource
				if accessEscapes(a) {
					escape = append(escape, q)
				} else {
					other = append(other, q)
				}
			}
			switch {
			case len(escape) > 0:
				row.Status = report.Fail
				row.Observed = "may " + strings.Join(append(escape, other...), ", ")
				row.Message = "with a token, an agent could leave its run or read others' secrets"
			case len(other) > 0:
				row.Status = report.Warn
				row.Observed = "may " + strings.Join(other, ", ")
				row.Message = "with a token, an agent could read the cluster"
			}
			out = append(out, row)
		}
		return out
	},
}

func accessEscapes(a Access) bool {
	for _, q := range K8sAccessQuestions {
		if q.Verb == a.Verb && q.Resource == a.Resource {
			return q.Escape
		}
	}
	return true // a question the table does not hold: judged as the worst
}
