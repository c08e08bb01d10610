// Package probecmd is the probe's command line: what runs inside probe
// containers and, copied in, inside live runs. Both the tool
// (`ssebench-audit probe`) and the small probe binary
// (cmd/ssebench-audit-probe) serve it, so either can be what an audit
// puts where agents stand.
package probecmd

import (
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/probes"
)

// New is the probe command (hidden in the tool: not for users).
func New() *cobra.Command {
	var planFile, rootPlan string
	var remove, as []string
	var thenStdin bool
	var after time.Duration
	cmd := &cobra.Command{
		Use:    "probe",
		Short:  "Run a probe plan (inside a probe container)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(as) > 0 {
				// In a run container, as root: everything in one exec.
				exe, err := os.Executable()
				if err != nil {
					exe = os.Args[0]
				}
				var then io.Reader
				if thenStdin {
					then = cmd.InOrStdin()
				}
				return probes.InRun{Exe: exe, Plan: planFile, Users: as, Passwd: "/etc/passwd",
					RootPlan: rootPlan, Remove: remove}.Serve(cmd.Context(), then, cmd.OutOrStdout())
			}
			if len(remove) > 0 {
				// What the in-container vantage copied into a run, and
				// nothing else: the files, and a probe still running them.
				if _, err := probes.StopCopies("/proc", remove, probes.CopiedPrefix); err != nil {
					return err
				}
				return probes.RemoveFiles(remove, probes.CopiedPrefix)
			}
			if after > 0 {
				select { // a pod's NetworkPolicy is enforced a moment after it starts
				case <-time.After(after):
				case <-cmd.Context().Done():
					return cmd.Context().Err()
				}
			}
			plan, err := probes.ReadPlanFile(planFile)
			if err != nil {
				return err
			}
			return probes.Execute(cmd.Context(), plan, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&planFile, "plan", "/plan.json", "the plan to run")
	cmd.Flags().StringVar(&rootPlan, "root-plan", "", "with --as: also run this plan as the exec's own user, root (a live run's network checks, and what only root may examine)")
	cmd.Flags().StringArrayVar(&remove, "remove", nil, "remove these files copied by the audit (names starting .sba-)")
	cmd.Flags().DurationVar(&after, "after", 0, "wait this long before running the plan (a probe pod: its policy is enforced a moment after it starts)")
	cmd.Flags().BoolVar(&thenStdin, "then-stdin", false, "with --as: report, then run one more plan read from stdin as root, then remove the copies")
	cmd.Flags().StringArrayVar(&as, "as", nil, "run the plan as this user (uid:gid or a name in /etc/passwd), repeatable; needs root")
	return cmd
}
