package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func names(cs []Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.RunName())
	}
	return out
}

// Each live run samples the next PeerSample runs of the ring, so every
// run is a target; a run attached to other networks is always a target.
func TestTargets(t *testing.T) {
	a, b, c, d := runCtr("2", "ra", "p_agents"), runCtr("3", "rb", "p_agents"), runCtr("4", "rc", "p_agents"), runCtr("5", "rd", "p_agents")
	dep := deployment(true, a, b, c, d)
	all := func(Container) bool { return true }
	assert.Equal(t, []string{"ra", "rb", "rc", "rd"}, names(FreshVantage(dep).targets(dep, all)))
	assert.Equal(t, []string{"rb", "rc"}, names(RunVantage(a).targets(dep, all)))
	assert.Equal(t, []string{"ra", "rb"}, names(RunVantage(d).targets(dep, all)), "the ring wraps")

	dual := runCtr("6", "re", "p_agents", "p_default")
	dep = deployment(true, a, b, c, d, dual)
	assert.Equal(t, []string{"rb", "rc", "re"}, names(RunVantage(a).targets(dep, all)), "attached differently: always")
	assert.Equal(t, []string{"ra", "rb", "rc", "rd"}, names(RunVantage(dual).targets(dep, all)))

	// Only what is wanted is sampled: the sample skips the others.
	holders := func(c Container) bool { return c.RunID != "rb" }
	assert.Equal(t, []string{"rc", "rd", "re"}, names(RunVantage(a).targets(dep, holders)))
}
