package checks

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/ssebench-audit/ssebench-audit/report"
)

const EngineVersion = "engine.version"

var engineVersion = &Check{
	ID:     EngineVersion,
	Title:  "The Docker engine is not affected by CVE-2024-29018 (DNS forwarded from internal networks)",
	From:   FromHost,
	Remedy: "Upgrade the engine to 23.0.11, 25.0.5, 26.0.0 or later; until then make sure the host's resolver is not on loopback.",
	Host: func(in HostInput) []report.Check {
		version := in.Dep.Engine.Version
		c := report.Check{Target: "docker engine", Observed: version,
			Expected: "not affected by CVE-2024-29018 (23.0.11, 25.0.5, 26.0.0 or later)"}
		switch affected, parsed := EngineAffected(version); {
		case !parsed:
			c.Status = report.Warn
			c.Message = "the engine version could not be read; dns.external is the active proof"
		case affected:
			c.Status = report.Warn
			c.Message = fmt.Sprintf("engine %s forwards external DNS queries from internal networks when the host's resolver is on loopback; dns.external shows whether it does here", version)
		default:
			c.Status, c.Message = report.Pass, "engine not affected"
		}
		return []report.Check{c}
	},
}

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
