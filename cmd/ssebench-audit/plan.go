package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

func newPlanCmd() *cobra.Command {
	f := &auditFlags{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Print, as JSON, every probe an audit would send and from where, without sending any",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd.Context(), func(cfg checks.Config, b checks.Backend) error {
				plans, err := checks.Plan(cmd.Context(), b, cfg)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(plans)
			})
		},
	}
	f.register(cmd, false)
	return cmd
}
