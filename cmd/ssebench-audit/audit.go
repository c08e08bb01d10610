package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// auditFlags are shared by audit, gate and bench.
type auditFlags struct {
	cfg     checks.Config
	backend backendFlags
	format  string
	output  string
}

// register adds the audit flags; reports adds --format and --output for
// commands that print an audit report.
func (f *auditFlags) register(cmd *cobra.Command, reports bool) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.cfg.Projects, "project", nil, "Compose project to audit (repeatable; default $COMPOSE_PROJECT_NAME, else ssebench)")
	fl.BoolVar(&f.cfg.AllProjects, "all-projects", false, "audit every Compose project that has an agents network")
	f.format = "table"
	if reports {
		fl.StringVar(&f.format, "format", "table", "report format: "+fmt.Sprint(report.Formats()))
		fl.StringVarP(&f.output, "output", "o", "", "write the report to FILE instead of stdout")
	}
	fl.StringArrayVar(&f.cfg.EgressTargets, "egress-target", nil, "internet target HOST:PORT that must not be reachable (repeatable; replaces the defaults)")
	fl.StringVar(&f.cfg.ProxyTarget, "proxy-target", "", "HOST:PORT the proxy is asked to forward to (default: the first --egress-target, else "+checks.DefaultProxyTarget+")")
	fl.StringArrayVar(&f.cfg.ExternalNames, "external-name", nil, "outside name that must not resolve (repeatable; replaces the defaults)")
	fl.StringArrayVar(&f.cfg.DNSServers, "dns-server", nil, "outside resolver IP that must not answer (repeatable; replaces the defaults)")
	fl.IntSliceVar(&f.cfg.HostPorts, "host-port", nil, "port probed on the gateway and host addresses (repeatable; replaces the defaults)")
	fl.StringArrayVar(&f.cfg.HostAddresses, "host-address", nil, "host address probed besides the gateway (repeatable; default: this host's interface addresses)")
	fl.StringArrayVar(&f.cfg.MetadataTargets, "metadata-target", nil, "on Kubernetes: cloud metadata HOST:PORT a run pod must not reach (repeatable; default "+fmt.Sprint(checks.DefaultMetadataTargets)+")")
	fl.StringArrayVar(&f.cfg.NodeLocalDNS, "node-local-dns", nil, "on Kubernetes: node-local DNS cache HOST:PORT (repeatable; default "+fmt.Sprint(checks.DefaultNodeLocalDNS)+")")
	fl.IntSliceVar(&f.cfg.KubeletPorts, "kubelet-port", nil, "on Kubernetes: kubelet port probed on every node address (repeatable; default "+fmt.Sprint(checks.DefaultKubeletPorts)+")")
	fl.DurationVar(&f.cfg.Timeout, "timeout", checks.DefaultTimeout, "timeout of each probe (more than 0, at most "+checks.MaxTimeout.String()+")")
	fl.IntVar(&f.cfg.Retries, "retries", 1, "probe inconclusive results again, up to this many times (never a reached target)")
	f.backend.register(fl)
	fl.BoolVar(&f.cfg.Strict, "strict", false, "count warnings as failures")
	fl.StringArrayVar(&f.cfg.Only, "only", nil, "run only this check ID (repeatable)")
	fl.StringArrayVar(&f.cfg.Skip, "skip", nil, "skip this check ID (repeatable)")
	fl.IntVar(&f.cfg.Workers, "workers", checks.DefaultWorkers, "vantage points probed at once (at least 1)")
	fl.StringVar(&f.cfg.LiveRunProbe, "live-run-probe", checks.LiveRunExec, "how a live run's network checks are made: "+
		checks.LiveRunExec+" (by the probe the in-container check runs in it anyway) or "+checks.LiveRunContainer+
		" (a probe container joined to its network namespace: slower, nothing but the socket check runs inside)")
}

// config completes the flags into a validated audit configuration.
func (f *auditFlags) config() (checks.Config, error) {
	cfg := f.cfg
	if f.backend.name == backendKubernetes && (len(cfg.Projects) > 0 || cfg.AllProjects) {
		return cfg, errors.New("--project and --all-projects name Compose projects: on Kubernetes, --namespace names the runs' namespace")
	}
	if len(cfg.Projects) == 0 && !cfg.AllProjects {
		p := os.Getenv("COMPOSE_PROJECT_NAME")
		if p == "" {
			p = "ssebench"
		}
		cfg.Projects = []string{p}
	}
	cfg.ToolVersion = version
	// The flags carry their defaults: what is zero or negative here, the
	// user typed.
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	if err := f.backend.validate(); err != nil {
		return cfg, err
	}
	if !formatKnown(f.format) {
		return cfg, fmt.Errorf("unknown --format %q (known: %v)", f.format, report.Formats())
	}
	// A report that cannot be written is found out before the audit, not
	// after it, when it would be lost.
	if err := checkDestination("--output", f.output); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func formatKnown(name string) bool {
	for _, f := range report.Formats() {
		if f == name {
			return true
		}
	}
	return false
}

// run validates the flags, connects to the backend and calls fn with the
// configuration and the backend.
func (f *auditFlags) run(ctx context.Context, fn func(checks.Config, checks.Backend) error) error {
	cfg, err := f.config()
	if err != nil {
		return err
	}
	b, closeBackend, err := f.backend.open(ctx)
	if err != nil {
		return err
	}
	defer closeBackend()
	if kb, ok := b.(interface{ Namespace() string }); ok {
		// A cluster's ssebench deployment is its runs' namespace.
		cfg.Projects, cfg.AllProjects = []string{kb.Namespace()}, false
	}
	return fn(cfg, b)
}

// finish writes the report as asked and maps its verdict to the exit status.
func (f *auditFlags) finish(rep *report.Report) error {
	if err := writeReport(f.format, f.output, rep); err != nil {
		return err
	}
	if code := rep.ExitCode(); code != 0 {
		return exitCode(code)
	}
	return nil
}

func newAuditCmd() *cobra.Command {
	f := &auditFlags{}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Audit the deployment and report (exit 0 pass, 1 fail, 2 error, 3 inconclusive)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd.Context(), func(cfg checks.Config, b checks.Backend) error {
				rep, err := checks.Audit(cmd.Context(), b, cfg)
				if err != nil {
					return err
				}
				return f.finish(rep)
			})
		},
	}
	f.register(cmd, true)
	return cmd
}

// writeReport renders to stdout, or to a file.
func writeReport(format, output string, rep *report.Report) error {
	var buf bytes.Buffer
	if err := report.Render(&buf, format, rep, report.Options{Catalogue: checks.Entries()}); err != nil {
		return err
	}
	if output == "" || output == "-" {
		_, err := os.Stdout.Write(buf.Bytes())
		return err
	}
	return writeFileAtomic(output, buf.Bytes())
}

// checkDestination says whether a file can be written at path: its
// directory exists and takes a new file, and path is no directory.
func checkDestination(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %s: is a directory", flag, path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ssebench-audit-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write there: %w", flag, path, errors.Unwrap(err))
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// writeFileAtomic replaces path in one step, so a crash never leaves half
// a report where CI looks for one.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ssebench-audit-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_ = os.Chmod(tmp.Name(), 0o644)
	return os.Rename(tmp.Name(), path)
}
