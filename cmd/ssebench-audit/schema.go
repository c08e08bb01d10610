package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/schema"
)

// maxSchemaDoc bounds --validate's read: a bench result with every run's
// audits is a few MiB; stdin may be anything.
const maxSchemaDoc = 64 << 20

func newSchemaCmd() *cobra.Command {
	var file string
	names := schema.Names()
	cmd := &cobra.Command{
		Use:   "schema [" + strings.Join(names, "|") + "]",
		Short: "Print the JSON Schema of a JSON output, or validate a document against it",
		Long: "schema prints the JSON Schema (draft 2020-12) of one of the tool's JSON outputs: report (audit\n" +
			"--format json), attestation (gate --attestation), bench (bench --format json) or run (the\n" +
			"audit.json bench writes beside each run's summary.json). The schemas allow fields they do not\n" +
			"name: later versions may add fields, and none is renamed or removed.",
		Example: "  ssebench-audit schema > report.schema.json\n" +
			"  ssebench-audit schema attestation\n" +
			"  ssebench-audit audit --format json | ssebench-audit schema report --validate -\n" +
			"  ssebench-audit schema run --validate results/t1/model/agent/RUN_ID/audit.json",
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
			if file == "" {
				_, err = cmd.OutOrStdout().Write(text)
				return err
			}
			label, doc, err := readSchemaDoc(cmd.InOrStdin(), file)
			if err != nil {
				return err
			}
			if err := schema.Validate(name, doc); err != nil {
				return fmt.Errorf("%s: %w", label, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: valid\n", label)
			return err
		},
	}
	cmd.Flags().StringVar(&file, "validate", "", "validate `FILE` ('-' for stdin) against the schema instead of printing it")
	return cmd
}

func readSchemaDoc(stdin io.Reader, file string) (string, []byte, error) {
	label, r := file, stdin
	if file == "-" {
		label = "stdin"
	} else {
		f, err := os.Open(file)
		if err != nil {
			return label, nil, err
		}
		defer f.Close()
		r = f
	}
	doc, err := probes.ReadAtMost(r, maxSchemaDoc)
	if err != nil {
		return label, nil, fmt.Errorf("%s: %w", label, err)
	}
	return label, doc, nil
}
