package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ssebench-audit/ssebench-audit/backend/docker"
	"github.com/ssebench-audit/ssebench-audit/bench"
	"github.com/ssebench-audit/ssebench-audit/checks"
)

func newBenchCmd() *cobra.Command {
	f := &auditFlags{}
	o := bench.Options{}
	var tasksFile, ssebenchCmd, format string
	cmd := &cobra.Command{
		Use:   "bench (--task ID... | --tasks FILE) --agent A --model M [flags] [-- extra ssebench run args]",
		Short: "Run the benchmark through `ssebench run`, each run gated on a passing audit and audited in flight",
		Long: "bench runs every task with `CMD run --task ID --agent A --model M --run-id RID --egress POLICY [extra]`\n" +
			"in the audited project (COMPOSE_PROJECT_NAME). Each run starts only after a passing gate: the\n" +
			"deployment audit (host checks and a fresh run), shared by the starts that follow it until the\n" +
			"project's networks change or --gate-max-age passes. While a run runs it is audited from its own\n" +
			"network namespace and from inside; afterwards\n" +
			"its summary.json must record the egress the audit saw, and audit.json is written beside it.\n" +
			"Exit status: 0 every run started and every audit passed, 1 a run was blocked or an audit failed,\n" +
			"2 errors.",
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.config()
			if err != nil {
				return err
			}
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				o.Extra = args[dash:]
				args = args[:dash]
			}
			if len(args) > 0 {
				return fmt.Errorf("unexpected argument %q (extra ssebench arguments go after --)", args[0])
			}
			if tasksFile != "" {
				ts, err := bench.ReadTasks(tasksFile)
				if err != nil {
					return err
				}
				o.Tasks = append(o.Tasks, ts...)
			}
			if format != "table" && format != "json" {
				return fmt.Errorf("unknown --format %q (known: table, json)", format)
			}
			o.SSEBench = strings.Fields(ssebenchCmd)
			o.Audit, o.Env = cfg, os.Environ()
			o.Progress, o.Live = os.Stderr, term.IsTerminal(int(os.Stderr.Fd()))
			if err := o.Validate(); err != nil {
				return err
			}
			if f.backend.choose(cmd.Context()) != backendDocker {
				return errors.New("bench runs ssebench's Docker backend only: --backend kubernetes is for audit and gate")
			}
			api, err := dockerClient()
			if err != nil {
				return err
			}
			defer api.Close()
			b := docker.New(api, f.backend.docker)
			if _, err := b.Engine(cmd.Context()); err != nil {
				return fmt.Errorf("%w: %w", checks.ErrEngine, err)
			}
			res := bench.Run(cmd.Context(), b, o)
			render := bench.RenderTable
			if format == "json" {
				render = bench.RenderJSON
			}
			if err := render(cmd.OutOrStdout(), res); err != nil {
				return err
			}
			if res.ExitCode != 0 {
				return exitCode(res.ExitCode)
			}
			return nil
		},
	}
	f.register(cmd, false)
	fl := cmd.Flags()
	fl.StringArrayVar(&o.Tasks, "task", nil, "task ID to run (repeatable)")
	fl.StringVar(&tasksFile, "tasks", "", "file with one task ID per line")
	fl.StringVar(&o.Agent, "agent", "", "agent to run (required)")
	fl.StringVar(&o.Model, "model", "", "model to run (required)")
	fl.StringVar(&o.Egress, "egress", "restricted", "egress policy of the runs: restricted or open")
	fl.StringVar(&ssebenchCmd, "ssebench", "ssebench", `the ssebench command, e.g. "uv run ssebench"`)
	fl.StringVar(&o.Results, "results", "results", "where ssebench writes its results")
	fl.IntVar(&o.Jobs, "jobs", 1, "runs at once (each gated)")
	fl.BoolVar(&o.FailFast, "fail-fast", false, "start no further run once one is blocked")
	fl.DurationVar(&o.GateMaxAge, "gate-max-age", bench.DefaultGateMaxAge, "how long one passing gate vouches for run starts (a change to the project's networks ends it sooner)")
	fl.StringVar(&format, "format", "table", "final report: table or json")
	return cmd
}
