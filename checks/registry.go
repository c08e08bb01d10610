package checks

import "github.com/ssebench-audit/ssebench-audit/report"

// registry is the catalogue, in its order (controls before what they
// control): everything reads it, the audit, --only and --skip, plans,
// `ssebench-audit checks` and docs/checks.md. Adding a check is one file
// and one line here.
var registry = []*Check{
	engineVersion,
	networkAgentsExists,
	networkAgentsInternal,
	networkAgentsMembers,
	runNetworks,
	runHardening,
	proxyPublished,
	proxyReachable,
	dnsProxy,
	dnsExternal,
	egressInternet,
	egressDNSDirect,
	egressHost,
	egressProxyForward,
	isolationProjects,
	daemonReferencePatch,
	daemonGradingGate,
	daemonPublicView,
	socketAdmin,
	isolationRuns,
	runEgressRecorded,
	k8sPolicySelected,
	k8sPolicyEffective,
	k8sPodHardening,
	k8sProxyIngress,
	k8sServiceAccount,
	auditProbe,
}

// Lookup finds a check by its ID.
func Lookup(id string) (*Check, bool) {
	for _, c := range registry {
		if c.ID == id {
			return c, true
		}
	}
	return nil, false
}

// Known says whether id is a catalogue ID.
func Known(id string) bool {
	_, ok := Lookup(id)
	return ok
}

// Entries describes the catalogue for reports.
func Entries() []report.Entry {
	out := make([]report.Entry, len(registry))
	for i, c := range registry {
		out[i] = report.Entry{ID: c.ID, Title: c.Title, From: string(c.From), Remedy: c.Remedy, Backends: c.backends()}
	}
	return out
}
