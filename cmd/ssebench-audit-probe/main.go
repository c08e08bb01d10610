// Command ssebench-audit-probe is the probe alone: what an audit runs in
// probe containers and copies into live runs. The tool itself can do the
// same (`ssebench-audit probe`), but it carries the Docker and Kubernetes
// clients, and every byte of it is copied into every live run it audits;
// `make build` puts this one beside it, where the tool looks for it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/probes/probecmd"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	probes.Version = version
	// Called as the tool is ("… probe --plan …"), so that an image or an
	// exec need not know which of the two binaries it holds.
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "probe" {
		args = args[1:]
	}
	cmd := probecmd.New()
	cmd.Use = "ssebench-audit-probe"
	cmd.Hidden = false
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ssebench-audit-probe: "+err.Error())
		os.Exit(2) // as the tool's probe command exits on an error
	}
}
