package probes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// Serve does it and writes what happened to out as one JSON line; with
// then, it writes that line before removing anything, reads one more plan
// (a JSON line; none at EOF) from then, runs it as root, and writes a
// second line with its report and the removal. The host learns what a
// run listens on from the first line and has the other runs probe it
// with the second, with no second copy into any run.
func (r InRun) Serve(ctx context.Context, then io.Reader, out io.Writer) error {
	if then == nil {
		return WriteMulti(out, r.Run(ctx))
	}
	first := r.examine(ctx)
	if err := WriteMulti(out, first); err != nil {
		return err
	}
	var last MultiReport
	plan, err := readThenPlan(then)
	switch {
	case err != nil:
		last.RootError = clip(err.Error())
	case plan != nil:
		rep := RunPlan(ctx, *plan)
		last.Then = &rep
	}
	r.remove(&last)
	return WriteMulti(out, last)
}

// readThenPlan reads the one plan line the host sends; nil for an empty
// line or EOF.
func readThenPlan(in io.Reader) (*Plan, error) {
	line, _ := bufio.NewReaderSize(io.LimitReader(in, MaxPlanBytes+1), 64<<10).ReadBytes('\n')
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, nil // EOF, or an empty line: no second plan
	}
	if len(line) > MaxPlanBytes {
		return nil, fmt.Errorf("second plan: more than %d bytes", MaxPlanBytes)
	}
	var p Plan
	if err := json.Unmarshal(line, &p); err != nil {
		return nil, fmt.Errorf("second plan: %w", err)
	}
	return &p, nil
}

// Run does it and says what happened; it never fails as a whole.
func (r InRun) Run(ctx context.Context) MultiReport {
	m := r.examine(ctx)
	r.remove(&m)
	return m
}

// examine runs root's plan and the users' plans; the copies stay.
func (r InRun) examine(ctx context.Context) MultiReport {
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
	return m
}

// remove removes the copies and says so in m.
func (r InRun) remove(m *MultiReport) {
	if len(r.Remove) == 0 {
		return
	}
	if err := RemoveFiles(r.Remove, CopiedPrefix); err != nil {
		m.Error = clip(err.Error())
	} else {
		m.Removed = true
	}
}
