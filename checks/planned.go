package checks

import (
	"strconv"
	"time"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// Planned is one active check on one target from one vantage point: the
// tasks a probe runs for it, each named, and how their results are judged.
type Planned struct {
	Check    string
	Target   string
	Expected string
	// Tasks carry, in their ID, a name unique within this check (the
	// judge finds results by it); the audit prefixes it in a whole plan.
	Tasks []probes.Task
	Judge func(Results) Judgement
	// TargetRun is the container of the run the check probes, where it
	// probes one (another run's daemon or server): a run that ends while
	// it is probed cannot be judged, and is said to have ended.
	TargetRun string

	// control is the positive control of Check (its catalogue entry's).
	control string
}

// Judgement is a judge's word on one planned check.
type Judgement struct {
	Status   report.Status
	Observed string
	Message  string
}

// Results are the results of one planned check's tasks, in task order.
type Results []TaskResult

// TaskResult is one task and what it observed.
type TaskResult struct {
	Name   string
	Task   probes.Task
	Result probes.Result
}

// Get is the result of the task of that name; an error outcome when the
// plan had none.
func (rs Results) Get(name string) TaskResult {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return TaskResult{Name: name, Result: probes.Result{Outcome: probes.Error, Detail: "no task " + name}}
}

// Has says whether the plan had a task of that name.
func (rs Results) Has(name string) bool {
	for _, r := range rs {
		if r.Name == name {
			return true
		}
	}
	return false
}

// task names a task for its check.
func task(name string, t probes.Task) probes.Task {
	t.ID = name
	return t
}

// planSep joins a planned check's index and a task's name into a plan's
// task ID: "3/absolute".
const planSep = "/"

// planOf gathers the tasks of planned checks into one plan, their IDs
// prefixed with the check's index so the names stay unique.
func planOf(ps []Planned, timeout time.Duration) probes.Plan {
	plan := probes.Plan{TimeoutMS: timeout.Milliseconds()}
	for i, p := range ps {
		plan.Tasks = append(plan.Tasks, prefixed(planPrefix(i), p.Tasks)...)
	}
	return plan
}

func planPrefix(i int) string { return strconv.Itoa(i) + planSep }

// resultsOf maps a probe's report back to each planned check's results,
// by the IDs planOf gave; missing[i] says a task of check i got none.
func resultsOf(ps []Planned, rep probes.Report) (out []Results, missing []bool) {
	idx := indexResults(rep)
	out, missing = make([]Results, len(ps)), make([]bool, len(ps))
	for i, p := range ps {
		out[i], missing[i] = named(planPrefix(i), p.Tasks, idx)
	}
	return out, missing
}

// prefixed copies tasks with their IDs prefixed, for a plan that carries
// the tasks of several checks.
func prefixed(prefix string, tasks []probes.Task) []probes.Task {
	out := make([]probes.Task, len(tasks))
	for i, t := range tasks {
		t.ID = prefix + t.ID
		out[i] = t
	}
	return out
}

// indexResults indexes a report's results by task ID.
func indexResults(rep probes.Report) map[string]probes.Result {
	idx := make(map[string]probes.Result, len(rep.Results))
	for _, r := range rep.Results {
		idx[r.ID] = r
	}
	return idx
}

// named finds the results of tasks (IDs as the check named them) under
// prefix; a task without one gets an error result, and missing is set.
func named(prefix string, tasks []probes.Task, idx map[string]probes.Result) (rs Results, missing bool) {
	for _, t := range tasks {
		r, ok := idx[prefix+t.ID]
		if !ok {
			missing = true
			r = probes.Result{Kind: t.Kind, Outcome: probes.Error, Detail: "no result"}
		}
		r.ID = t.ID
		rs = append(rs, TaskResult{Name: t.ID, Task: t, Result: r})
	}
	return rs, missing
}

// longest is the longest a result of these took, as the check's duration
// (tasks run concurrently).
func (rs Results) longest() int64 {
	var took int64
	for _, r := range rs {
		took = max(took, r.Result.DurationMS)
	}
	return took
}
