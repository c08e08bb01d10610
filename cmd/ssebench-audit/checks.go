package main

import (
	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

func newChecksCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "checks",
		Short: "List every check: its ID, what it proves, from where, and the fix",
		Example: "  ssebench-audit checks\n" +
			"  ssebench-audit checks --format json | jq -r '.[].id'\n" +
			"  ssebench-audit checks --format markdown > CHECKS.md",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return checks.WriteCatalogue(cmd.OutOrStdout(), format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table, json or markdown")
	return cmd
}
