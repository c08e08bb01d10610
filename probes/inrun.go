package probes

import (
	"context"
	"sync"
)

// InRun is what one exec of the probe into a run container does, as root:
// root's plan (the run's network checks, in the run's own namespaces, and
// what only root may see, such as the admin socket's real mode), meanwhile
// the agent-side plan once per user, then the copies removed, so one exec
// does all the audit needs inside a run.
type InRun struct {
	Exe      string   // this executable, re-run as each user
	Plan     string   // the plan file run as each of Users
	Users    []string // "uid:gid" or names in Passwd
	Passwd   string   // where names are looked up
	RootPlan string   // the plan file run as root meanwhile; "" for none
	Remove   []string // the copies to remove when done (names starting .sba-)
}

// Run does it and says what happened; it never fails as a whole.
func (r InRun) Run(ctx context.Context) MultiReport {
	var root Report
	var rootErr error
	var wg sync.WaitGroup
	if r.RootPlan != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			root, rootErr = RunPlanFile(ctx, r.RootPlan)
		}()
	}
	m := RunAs(ctx, r.Exe, r.Plan, r.Users, r.Passwd)
	wg.Wait()
	switch {
	case rootErr != nil:
		m.RootError = clip(rootErr.Error())
	case r.RootPlan != "":
		m.Root = &root
	}
	if len(r.Remove) > 0 {
		if err := RemoveFiles(r.Remove, CopiedPrefix); err != nil {
			m.Error = clip(err.Error())
		} else {
			m.Removed = true
		}
	}
	return m
}
