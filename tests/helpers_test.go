package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/fixtures"
	"github.com/ssebench-audit/ssebench-audit/report"
	"github.com/ssebench-audit/ssebench-audit/schema/validate"
)

// up materialises a deployment for one test and removes it when the test
// ends, passed or failed.
func up(t *testing.T, o fixtures.Options) *fixtures.Deployment {
	t.Helper()
	if o.Project == "" {
		o.Project = "sbae2e" + randHex(3)
	}
	o.Label = "e2e/" + t.Name()
	o.Image = image
	o.UpstreamDNS = world.Address
	// The suite creates and removes networks in parallel, and while Docker
	// 20.10 rewrites its rules for one, internal networks are not isolated
	// from other bridges' published ports (fixtures/guard.go).
	o.IsolationGuard = true
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	d, err := fixtures.Up(ctx, api, o)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := d.Down(ctx); err != nil {
			t.Errorf("tearing down %s: %v", o.Project, err)
		}
	})
	return d
}

// closedPort returns a port that was free a moment ago: the only kind of
// port an audit in these tests may probe besides the ones a test opened.
func closedPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// result is one run of the real binary.
type result struct {
	code   int
	stdout string
	stderr string
	report *report.Report // when the output was a JSON report
}

// worldArgs point every internet-facing check at the internet stand-in, so
// no probe ever leaves this machine.
func worldArgs(hostPort int) []string {
	return []string{
		"--egress-target", world.HTTP,
		"--external-name", "example.com", "--external-name", "pypi.org",
		"--dns-server", world.Address,
		"--host-port", strconv.Itoa(hostPort),
		"--probe-dns", world.Address,
		"--timeout", "1s",
	}
}

// audit runs `ssebench-audit audit --format json` on a project.
func audit(t *testing.T, project string, hostPort int, extra ...string) result {
	t.Helper()
	args := append([]string{"audit", "--format", "json", "--project", project}, worldArgs(hostPort)...)
	return withReport(t, runTool(t, nil, append(args, extra...)...))
}

// withReport reads the JSON report a run of the tool printed, checked
// against its schema.
func withReport(t *testing.T, r result) result {
	t.Helper()
	if r.code <= 3 && strings.HasPrefix(strings.TrimSpace(r.stdout), "{") {
		r.report = &report.Report{}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), r.report), r.stdout)
		requireSchema(t, "report", []byte(r.stdout))
	}
	return r
}

// requireSchema: what the tool wrote matches its published schema, and
// the schema describes every field of it.
func requireSchema(t *testing.T, name string, doc []byte) {
	t.Helper()
	require.NoError(t, validate.Validate(name, doc))
	require.Empty(t, validate.Undescribed(name, doc), "fields the %s schema does not describe", name)
}

// runTool runs the binary with env added to the environment.
func runTool(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(cmd.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// checksOf returns the project's checks with id (any target, any vantage).
func checksOf(r *report.Report, project, id string) []report.Check {
	return projectChecks(r, project, func(c report.Check) bool { return c.ID == id })
}

// checksOfVantage returns the project's checks from one vantage point.
func checksOfVantage(r *report.Report, project, vantage string) []report.Check {
	return projectChecks(r, project, func(c report.Check) bool { return c.Vantage == vantage })
}

func projectChecks(r *report.Report, project string, keep func(report.Check) bool) []report.Check {
	var out []report.Check
	for _, p := range r.Projects {
		if p.Name != project {
			continue
		}
		for _, c := range p.Checks {
			if keep(c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// statuses counts the statuses of a project's checks with id.
func statuses(r *report.Report, project, id string) map[report.Status]int {
	m := map[report.Status]int{}
	for _, c := range checksOf(r, project, id) {
		m[c.Status]++
	}
	return m
}

// failing lists "id vantage target" of every failed check, for messages.
func failing(r *report.Report) []string {
	var out []string
	for _, p := range r.Projects {
		for _, c := range p.Checks {
			if c.Status != report.Pass && c.Status != report.Skip {
				out = append(out, string(c.Status)+" "+c.ID+" "+c.Vantage+" "+c.Target+": "+c.Observed)
			}
		}
	}
	return out
}
