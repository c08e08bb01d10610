package bench

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
)

// RenderTable writes the final table: one row per run, then why each run
// that did not pass did not.
func RenderTable(w io.Writer, r *Result) error {
	fmt.Fprintf(w, "benchmark of project %s: %s\n", r.Project, r.Verdict)
	t := tablewriter.NewTable(w)
	t.Header("TASK", "RUN ID", "GATE", "IN FLIGHT", "EGRESS RECORDED", "SSEBENCH EXIT", "VERDICT")
	for _, rr := range r.Runs {
		gate, inflight, egress, exit := "-", "-", "-", "-"
		if rr.Gate != nil {
			gate = string(rr.Gate.Verdict)
		}
		if rr.InFlight != nil {
			inflight = string(rr.InFlight.Verdict)
		}
		if rr.EgressRecorded != nil {
			egress = string(rr.EgressRecorded.Status)
		}
		if rr.ExitCode >= 0 {
			exit = fmt.Sprint(rr.ExitCode)
		}
		if err := t.Append(rr.Task, rr.RunID, gate, inflight, egress, exit, rr.Verdict); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, rr := range r.Runs {
		if rr.Verdict != VerdictPass {
			fmt.Fprintf(w, "%s (%s): %s — %s\n", rr.Task, rr.RunID, rr.Verdict, rr.Reason)
		}
		if rr.RunDir != "" {
			fmt.Fprintf(w, "%s: evidence in %s/audit.json\n", rr.Task, rr.RunDir)
		}
	}
	return nil
}
