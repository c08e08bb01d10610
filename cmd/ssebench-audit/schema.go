package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/schema"
)

func newSchemaCmd() *cobra.Command {
	names := schema.Names()
	cmd := &cobra.Command{
		Use:   "schema [" + strings.Join(names, "|") + "]",
		Short: "Print the JSON Schema of a JSON output",
		Long: "schema prints the JSON Schema (draft 2020-12) of one of the tool's JSON outputs: report (audit\n" +
			"--format json), attestation (gate --attestation), bench (bench --format json) or run (the\n" +
			"audit.json bench writes beside each run's summary.json). The schemas allow fields they do not\n" +
			"name: later versions may add fields, and none is renamed or removed. Any JSON Schema 2020-12\n" +
			"validator checks a document against them.",
		Example: "  ssebench-audit schema > report.schema.json\n" +
			"  ssebench-audit schema attestation\n" +
			"  ssebench-audit schema run > run.schema.json   # audit.json beside each run",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: names,
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "report"
			if len(args) == 1 {
				name = args[0]
			}
			text, err := schema.Get(name)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(text)
			return err
		},
	}
	return cmd
}
