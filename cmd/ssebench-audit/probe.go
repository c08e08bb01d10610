package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/probes"
)

// maxPlanBytes bounds the plan file a probe container reads.
const maxPlanBytes = 4 << 20

// newProbeCmd is what runs inside probe containers (hidden: not for users).
func newProbeCmd() *cobra.Command {
	var planFile string
	var remove, as []string
	cmd := &cobra.Command{
		Use:    "probe",
		Short:  "Run a probe plan (inside a probe container)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(as) > 0 {
				// In a run container, as root: the plan as each agent-side
				// user, then the copies removed, in one exec.
				exe, err := os.Executable()
				if err != nil {
					exe = os.Args[0]
				}
				m := probes.RunAs(cmd.Context(), exe, planFile, as, "/etc/passwd")
				if len(remove) > 0 {
					if err := probes.RemoveFiles(remove, ".sba-"); err != nil {
						m.Error = err.Error()
					} else {
						m.Removed = true
					}
				}
				return probes.WriteMulti(cmd.OutOrStdout(), m)
			}
			if len(remove) > 0 {
				// What the in-container vantage copied into a run, and nothing else.
				return probes.RemoveFiles(remove, ".sba-")
			}
			f, err := os.Open(planFile)
			if err != nil {
				return err
			}
			defer f.Close()
			plan, err := io.ReadAll(io.LimitReader(f, maxPlanBytes+1))
			if err != nil {
				return err
			}
			if len(plan) > maxPlanBytes {
				return fmt.Errorf("plan larger than %d bytes", maxPlanBytes)
			}
			return probes.Execute(cmd.Context(), plan, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&planFile, "plan", "/plan.json", "the plan to run")
	cmd.Flags().StringArrayVar(&remove, "remove", nil, "remove these files copied by the audit (names starting .sba-)")
	cmd.Flags().StringArrayVar(&as, "as", nil, "run the plan as this user (uid:gid or a name in /etc/passwd), repeatable; needs root")
	return cmd
}
