package checks

import (
	"sort"
	"strings"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const ProxyPublished = "proxy.published"

var proxyPublished = &Check{
	ID:     ProxyPublished,
	Title:  "The proxy's host port is bound to loopback",
	From:   FromHost,
	Remedy: "Set LITELLM_BIND=127.0.0.1 (the current compose file's default) and recreate the proxy.",
	Host: func(in HostInput) []report.Check {
		c := report.Check{Target: ServiceProxy, Expected: "host port bound to 127.0.0.1 or ::1"}
		p := in.Dep.Proxy
		if p == nil {
			c.Status, c.Message = report.Skip, "no proxy container found"
			return []report.Check{c}
		}
		c.Target = p.Name
		var binds []string
		exposed := false
		for _, b := range p.Published {
			binds = append(binds, b.String())
			exposed = exposed || (b.HostIP != "127.0.0.1" && b.HostIP != "::1")
		}
		sort.Strings(binds)
		switch {
		case len(binds) == 0:
			c.Status, c.Observed = report.Pass, "not published"
		case exposed:
			c.Status, c.Observed = report.Warn, strings.Join(binds, ", ")
			c.Message = "the proxy (and its API keys' budget) is reachable from every network the host is on"
		default:
			c.Status, c.Observed = report.Pass, strings.Join(binds, ", ")
		}
		return []report.Check{c}
	},
}
