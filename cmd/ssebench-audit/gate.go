package main

import (
	"bytes"
	"context"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/report"
)

func newGateCmd() *cobra.Command {
	f := &auditFlags{}
	var attestation string
	cmd := &cobra.Command{
		Use:   "gate",
		Short: "The pre-run gate for CI: audit, write an attestation, exit as audit does",
		Long: "gate runs the full audit and writes an attestation file: the JSON report plus the engine's\n" +
			"version and ID, the audited networks' IDs, the probe image's ID, the tool's version and the\n" +
			"start and end time. Exit status as for audit: 0 pass, 1 fail, 2 error, 3 inconclusive.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkDestination("--attestation", attestation); err != nil {
				return err
			}
			return f.run(cmd.Context(), func(cfg checks.Config, b checks.Backend) error {
				rep, ev, err := checks.AuditWithEvidence(cmd.Context(), b, cfg)
				if err != nil {
					return err
				}
				if eb, ok := b.(interface {
					EngineID(context.Context) (string, error)
				}); ok {
					if id, err := eb.EngineID(cmd.Context()); err == nil {
						ev.EngineID = id
					}
				}
				var buf bytes.Buffer
				if err := report.WriteAttestation(&buf, report.NewAttestation(rep, ev)); err != nil {
					return err
				}
				if err := writeFileAtomic(attestation, buf.Bytes()); err != nil {
					return err
				}
				return f.finish(rep)
			})
		},
	}
	f.register(cmd, true)
	cmd.Flags().StringVar(&attestation, "attestation", "audit-attestation.json", "where to write the attestation")
	return cmd
}
