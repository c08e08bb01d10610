package checks

import (
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/go-connections/nat"
	"github.com/stretchr/testify/assert"

	"github.com/ssebench-audit/ssebench-audit/report"
)

func TestHardening(t *testing.T) {
	base := func() container.InspectResponse {
		r := inspect("2", "run-a", map[string]string{LabelRunID: "ra", "ssebench.results": "/srv/results/t/m/a/ra"}, "p_agents")
		return r
	}
	for name, tc := range map[string]struct {
		mutate func(*container.InspectResponse)
		want   report.Status
		says   string
	}{
		"defaults":    {func(*container.InspectResponse) {}, report.Pass, "Docker defaults"},
		"privileged":  {func(r *container.InspectResponse) { r.HostConfig.Privileged = true }, report.Fail, "privileged"},
		"host pid":    {func(r *container.InspectResponse) { r.HostConfig.PidMode = "host" }, report.Fail, "PID namespace"},
		"sys_admin":   {func(r *container.InspectResponse) { r.HostConfig.CapAdd = []string{"CAP_SYS_ADMIN"} }, report.Fail, "SYS_ADMIN"},
		"default cap": {func(r *container.InspectResponse) { r.HostConfig.CapAdd = []string{"CHOWN"} }, report.Pass, ""},
		"other cap":   {func(r *container.InspectResponse) { r.HostConfig.CapAdd = []string{"IPC_LOCK"} }, report.Warn, "IPC_LOCK"},
		"docker socket": {func(r *container.InspectResponse) {
			r.Mounts = []container.MountPoint{{Type: mount.TypeBind, Source: "/var/run/docker.sock", Destination: "/s"}}
		}, report.Fail, "Docker API"},
		"its dir": {func(r *container.InspectResponse) {
			r.Mounts = []container.MountPoint{{Type: mount.TypeBind, Source: "/run", Destination: "/h"}}
		}, report.Fail, "Docker API"},
		"results rw": {func(r *container.InspectResponse) {
			r.Mounts = []container.MountPoint{{Type: mount.TypeBind, Source: "/srv/results/t/m/a/ra/out", RW: true}}
		}, report.Pass, ""},
		"home rw": {func(r *container.InspectResponse) {
			r.Mounts = []container.MountPoint{{Type: mount.TypeBind, Source: "/home/u", RW: true}}
		}, report.Warn, "/home/u"},
		"published": {func(r *container.InspectResponse) {
			r.NetworkSettings.Ports = nat.PortMap{"4263/tcp": {{HostIP: "0.0.0.0", HostPort: "4263"}}}
		}, report.Fail, "publishes"},
		"seccomp off": {func(r *container.InspectResponse) { r.HostConfig.SecurityOpt = []string{"seccomp=unconfined"} }, report.Warn, "seccomp"},
	} {
		r := base()
		tc.mutate(&r)
		cs := hardeningChecks([]container.InspectResponse{r})
		if assert.Len(t, cs, 1, name) {
			assert.Equal(t, tc.want, cs[0].Status, "%s: %s", name, cs[0].Observed)
			assert.Contains(t, cs[0].Observed, tc.says, name)
		}
	}
}
