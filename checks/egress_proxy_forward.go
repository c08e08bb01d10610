package checks

import (
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

const EgressProxyForward = "egress.proxy-forward"

var egressProxyForward = &Check{
	ID:      EgressProxyForward,
	Title:   "The proxy refuses to forward (CONNECT, absolute-URI GET) to an internet target",
	From:    FromRuns,
	Remedy:  "Run the LiteLLM proxy image itself; never put a forwarding HTTP proxy on the agents network.",
	Control: ProxyReachable,
	// On a cluster, to the proxy's Service.
	Backends: []string{BackendDocker, BackendKubernetes},
	Plan: func(in PlanInput) []Planned {
		addr := proxyAddr(in.Dep)
		if addr == "" {
			return nil
		}
		t := in.Config.ProxyTarget
		return []Planned{
			{Target: "CONNECT " + t + " via " + addr, Expected: "not 2xx",
				Tasks: []probes.Task{task("connect", probes.Task{Kind: probes.KindHTTP, Address: addr, Method: "CONNECT", Target: t, Host: t})},
				Judge: func(rs Results) Judgement { return judgeNoTunnel(rs.Get("connect").Result) }},
			{Target: "GET http://" + t + "/ via " + addr, Expected: "answered like a local request",
				Tasks: []probes.Task{
					task("local", probes.Task{Kind: probes.KindHTTP, Address: addr, Method: "GET", Target: "/", Host: t}),
					task("absolute", probes.Task{Kind: probes.KindHTTP, Address: addr, Method: "GET", Target: "http://" + t + "/", Host: t}),
				},
				Judge: func(rs Results) Judgement { return judgeNoForward(rs.Get("local").Result, rs.Get("absolute").Result) }},
		}
	},
}

func judgeNoTunnel(r probes.Result) Judgement {
	obs := describeHTTP(r)
	switch {
	case r.Outcome == probes.Error:
		return Judgement{report.Error, obs, "the probe could not run"}
	case r.Outcome == probes.Closed:
		return Judgement{pass, obs, "the proxy hung up on the CONNECT"}
	case r.Outcome != probes.Response || r.HTTP == nil:
		return Judgement{inco, obs, "the proxy did not answer: blocked cannot be told from broken"}
	case r.HTTP.Status >= 200 && r.HTTP.Status < 300:
		return Judgement{fail, obs, "the proxy opened a tunnel to an internet target"}
	}
	return Judgement{pass, obs, ""}
}

// judgeNoForward compares the proxy's answer to an absolute-URI request with
// its answer to the same path in origin form: a server that does not
// forward routes both alike; a forwarding proxy returns the target's answer.
func judgeNoForward(local, absolute probes.Result) Judgement {
	obs := "absolute-URI GET: " + describeHTTP(absolute) + "; local GET: " + describeHTTP(local)
	switch {
	case absolute.Outcome == probes.Error:
		return Judgement{report.Error, obs, "the probe could not run"}
	case absolute.Outcome == probes.Closed:
		return Judgement{pass, obs, "the proxy hung up on the absolute-URI request"}
	case absolute.Outcome != probes.Response || absolute.HTTP == nil:
		return Judgement{inco, obs, "the proxy did not answer: blocked cannot be told from broken"}
	}
	st := absolute.HTTP.Status
	same := local.Outcome == probes.Response && local.HTTP != nil &&
		local.HTTP.Status == st && local.HTTP.BodySHA256 == absolute.HTTP.BodySHA256
	switch {
	case same:
		return Judgement{pass, obs, ""}
	case st >= 200 && st < 400:
		return Judgement{fail, obs, "the proxy forwarded a request to an internet target"}
	case st == 502 || st == 503 || st == 504:
		return Judgement{warn, obs, "the proxy tried to forward (gateway error): it is a forwarding proxy whose target was unreachable"}
	}
	return Judgement{pass, obs, ""}
}
