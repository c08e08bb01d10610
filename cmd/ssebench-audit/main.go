// Command ssebench-audit proves, on a live host, that an ssebench deployment
// keeps its agents away from the answers. This package is flag parsing and
// wiring only; the work is in checks, probes, report and fixtures.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/docker/docker/client"
	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/probes/probecmd"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// exitCode carries a status other than 0 or 2 out of a command.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func main() {
	probes.Version = version
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	stop()
	os.Exit(exitStatus(err))
}

func exitStatus(err error) int {
	var code exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	}
	fmt.Fprintln(os.Stderr, "ssebench-audit: "+oneLine(err.Error()))
	return report.ExitError
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "ssebench-audit",
		Short: "Audit an ssebench deployment from where its agents stand",
		Long: "ssebench-audit drops short-lived probe containers onto an ssebench deployment's networks and\n" +
			"into its live runs, and checks that agents reach the LiteLLM proxy and nothing else.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddCommand(newAuditCmd(), newGateCmd(), newBenchCmd(), newPlanCmd(), newCleanupCmd(), probecmd.New(), newProbeImageCmd(),
		newVersionCmd(), newFixtureStubCmd(), newDemoCmd(), newChecksCmd(), newSchemaCmd())
	return root
}

// dockerClient connects as the docker CLI would (DOCKER_HOST honoured).
func dockerClient() (*client.Client, error) {
	return client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
