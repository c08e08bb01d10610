package main

import (
	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/fixtures/stub"
)

// newFixtureStubCmd runs a fixture stand-in (proxy, daemon, ...) inside a
// fixture container (hidden: for tests and the demo).
func newFixtureStubCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "fixture-stub ROLE [flags]",
		Short:              "Run a fixture stand-in server",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := stub.Main(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
}
