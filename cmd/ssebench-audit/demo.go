package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/fixtures/demo"
)

func newDemoCmd() *cobra.Command {
	o := demo.Options{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Bring up a correct and a faulty demo deployment, audit both, remove everything",
		Long: "demo needs root (it makes a network namespace as its internet stand-in) and a Docker engine;\n" +
			"it sends traffic only to what it starts itself.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			o.Binary, o.Out, o.Version = exe, cmd.OutOrStdout(), version
			api, err := dockerClient()
			if err != nil {
				return err
			}
			defer api.Close()
			return demo.Show(cmd.Context(), api, o)
		},
	}
	cmd.Flags().StringVar(&o.Format, "format", "table", "report format of each audit")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 2*time.Second, "timeout of each probe")
	return cmd
}
