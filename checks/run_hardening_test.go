package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ssebench-audit/ssebench-audit/report"
)

func TestHardening(t *testing.T) {
	base := func() Container {
		r := runCtr("2", "ra", "p_agents")
		r.ResultsDir = "/srv/results/t/m/a/ra"
		return r
	}
	for name, tc := range map[string]struct {
		mutate func(*Container)
		want   report.Status
		says   string
	}{
		"defaults":    {func(*Container) {}, report.Pass, "Docker defaults"},
		"privileged":  {func(r *Container) { r.Hardening.Privileged = true }, report.Fail, "privileged"},
		"host pid":    {func(r *Container) { r.Hardening.HostNamespaces = []string{"PID"} }, report.Fail, "PID namespace"},
		"sys_admin":   {func(r *Container) { r.Hardening.CapAdd = []string{"CAP_SYS_ADMIN"} }, report.Fail, "SYS_ADMIN"},
		"default cap": {func(r *Container) { r.Hardening.CapAdd = []string{"CHOWN"} }, report.Pass, ""},
		"other cap":   {func(r *Container) { r.Hardening.CapAdd = []string{"IPC_LOCK"} }, report.Warn, "IPC_LOCK"},
		"docker socket": {func(r *Container) {
			r.Hardening.Mounts = []Mount{{Bind: true, Source: "/var/run/docker.sock", Destination: "/s"}}
		}, report.Fail, "Docker API"},
		"its dir": {func(r *Container) {
			r.Hardening.Mounts = []Mount{{Bind: true, Source: "/run", Destination: "/h"}}
		}, report.Fail, "Docker API"},
		"a volume named like it": {func(r *Container) {
			r.Hardening.Mounts = []Mount{{Source: "/var/run/docker.sock", Destination: "/s"}}
		}, report.Pass, ""},
		"results rw": {func(r *Container) {
			r.Hardening.Mounts = []Mount{{Bind: true, Source: "/srv/results/t/m/a/ra/out", RW: true}}
		}, report.Pass, ""},
		"home rw": {func(r *Container) {
			r.Hardening.Mounts = []Mount{{Bind: true, Source: "/home/u", RW: true}}
		}, report.Warn, "/home/u"},
		"published": {func(r *Container) {
			r.Published = []Binding{{HostIP: "0.0.0.0", HostPort: "4263", Port: "4263/tcp"}}
		}, report.Fail, "publishes"},
		"seccomp off": {func(r *Container) { r.Hardening.SecurityOpt = []string{"seccomp=unconfined"} }, report.Warn, "seccomp"},
		"unknown":     {func(r *Container) { r.Hardening = nil }, report.Error, "no host configuration"},
	} {
		r := base()
		tc.mutate(&r)
		cs := host(runHardening, deployment(true, r))
		if assert.Len(t, cs, 1, name) {
			assert.Equal(t, tc.want, cs[0].Status, "%s: %s", name, cs[0].Observed)
			assert.Contains(t, cs[0].Observed, tc.says, name)
		}
	}
}
