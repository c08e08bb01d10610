package checks

import (
	"slices"

	"github.com/ssebench-audit/ssebench-audit/report"
)

// mergeTargets folds the rows of PerTarget checks that share an ID and a
// target into one: the worst status, with that row's evidence and vantage
// (the contract's one vantage), and every vantage it was seen from. A
// report of many runs then grows with the runs, not with their pairs.
func mergeTargets(rows []report.Check) []report.Check {
	type key struct{ id, target string }
	at := map[key]int{}
	var out []report.Check
	for _, r := range rows {
		c, ok := Lookup(r.ID)
		if !ok || !c.PerTarget {
			out = append(out, r)
			continue
		}
		k := key{r.ID, r.Target}
		i, seen := at[k]
		if !seen {
			r.Vantages = []string{r.Vantage}
			at[k] = len(out)
			out = append(out, r)
			continue
		}
		m := &out[i]
		vantages := append(m.Vantages, r.Vantage)
		took := max(m.DurationMS, r.DurationMS)
		if r.Status.Rank() < m.Status.Rank() {
			*m = r
		}
		m.Vantages, m.DurationMS = vantages, took
	}
	for i := range out {
		if len(out[i].Vantages) > 0 {
			slices.Sort(out[i].Vantages)
			out[i].Vantages = slices.Compact(out[i].Vantages)
		}
	}
	return out
}
