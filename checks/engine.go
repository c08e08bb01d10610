package checks

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/ssebench-audit/ssebench-audit/checks/catalogue"
	"github.com/ssebench-audit/ssebench-audit/report"
)

var semver = regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?`)

// cve202429018Fixed lists, per affected release line, the first fixed
// version (moby#47538); lines not listed before 26 are affected throughout.
var cve202429018Fixed = map[[2]int]int{{23, 0}: 11, {25, 0}: 5}

// EngineAffected says whether an engine version forwards DNS from internal
// networks (CVE-2024-29018), and whether the version could be read at all.
func EngineAffected(version string) (affected, parsed bool) {
	m := semver.FindStringSubmatch(version)
	if m == nil {
		return false, false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	patch := 0
	if m[3] != "" {
		patch, _ = strconv.Atoi(m[3])
	}
	if major >= 26 {
		return false, true
	}
	if fixed, ok := cve202429018Fixed[[2]int{major, minor}]; ok {
		return patch < fixed, true
	}
	return true, true
}

// engineMajor is the engine's major version, 0 when unreadable.
func engineMajor(version string) int {
	m := semver.FindStringSubmatch(version)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// ipv6IsolationChecks: before Docker 27 no IPv6 isolation rules were
// installed unless ip6tables was enabled (moby#47747), so an IPv6-enabled
// internal network may be open; the ipv6 probes show whether it is.
func ipv6IsolationChecks(d *Deployment, engineVersion string) []report.Check {
	if !d.IPv6() {
		return nil
	}
	c := report.Check{ID: catalogue.NetworkAgentsInternal, Vantage: "host", Target: d.Agents.Name + " (IPv6)",
		Expected: "IPv6 isolated (engine 27 or later, or ip6tables enabled)", Observed: "IPv6 enabled, engine " + engineVersion}
	if major := engineMajor(engineVersion); major > 0 && major < 27 {
		c.Status = report.Warn
		c.Message = "engines before 27 install no IPv6 isolation rules unless ip6tables is enabled (moby#47747): see the ipv6 egress checks"
	} else {
		c.Status = report.Pass
	}
	return []report.Check{c}
}

func checkEngineVersion(version string) report.Check {
	c := report.Check{
		ID: catalogue.EngineVersion, Vantage: "host", Target: "docker engine",
		Expected: "not affected by CVE-2024-29018 (23.0.11, 25.0.5, 26.0.0 or later)",
		Observed: version,
	}
	switch affected, parsed := EngineAffected(version); {
	case !parsed:
		c.Status = report.Warn
		c.Message = "the engine version could not be read; dns.external is the active proof"
	case affected:
		c.Status = report.Warn
		c.Message = fmt.Sprintf("engine %s forwards external DNS queries from internal networks when the host's resolver is on loopback; dns.external shows whether it does here", version)
	default:
		c.Status = report.Pass
		c.Message = "engine not affected"
	}
	return c
}
