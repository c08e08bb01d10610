package probes

import (
	"context"
	"sync"
)

// InRun is what one exec of the probe into a run container does, as root:
// the network plan as root (the run's own namespaces, as the run's checks
// need), meanwhile the agent-side plan once per user, then the copies
// removed, so one exec does all the audit needs inside a run.
type InRun struct {
	Exe         string   // this executable, re-run as each user
	Plan        string   // the plan file run as each of Users
	Users       []string // "uid:gid" or names in Passwd
	Passwd      string   // where names are looked up
	NetworkPlan string   // the plan file run as root meanwhile; "" for none
	Remove      []string // the copies to remove when done (names starting .sba-)
}

// Run does it and says what happened; it never fails as a whole.
func (r InRun) Run(ctx context.Context) MultiReport {
	var network Report
	var networkErr error
	var wg sync.WaitGroup
	if r.NetworkPlan != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			network, networkErr = RunPlanFile(ctx, r.NetworkPlan)
		}()
	}
	m := RunAs(ctx, r.Exe, r.Plan, r.Users, r.Passwd)
	wg.Wait()
	switch {
	case networkErr != nil:
		m.NetworkError = clip(networkErr.Error())
	case r.NetworkPlan != "":
		m.Network = &network
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
