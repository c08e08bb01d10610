package checks_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/checks/checkstest"
	"github.com/ssebench-audit/ssebench-audit/probes"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// A daemon that hangs up mid-request errs; when its run has ended by then,
// the row says so and is not judged; while it still runs, it stays an
// error.
func TestEndedTargetNotJudged(t *testing.T) {
	for _, ends := range []bool{true, false} {
		b := fake("ra", "rb")
		b.Answer = func(w checkstest.Where, task probes.Task) probes.Result {
			if task.Kind == probes.KindHTTP && strings.HasPrefix(task.Address, "10.9.1.3:") {
				if ends {
					b.Locked(func() any {
						d := b.Deployments["p"]
						d.Runs = d.Runs[:1] // rb is gone
						return nil
					})
				}
				return probes.Result{Outcome: probes.Closed, Connected: true}
			}
			return checkstest.Correct(w, task)
		}
		rep := audit(t, b, config())
		var rb []report.Check
		for _, c := range rows(rep, checks.DaemonReferencePatch, "") {
			if strings.HasPrefix(c.Target, "rb ") {
				rb = append(rb, c)
			}
		}
		require.Len(t, rb, 1)
		if ends {
			assert.Equal(t, report.Skip, rb[0].Status, rb[0].Message)
			assert.Contains(t, rb[0].Message, "the run ended while it was audited")
		} else {
			assert.Equal(t, report.Error, rb[0].Status)
			assert.Equal(t, report.VerdictError, rep.Verdict)
		}
	}
}

// The audited run itself ends mid-audit (bench's in flight, a short run):
// what could not be probed of it is not judged.
func TestEndedVantageNotJudged(t *testing.T) {
	for _, ends := range []bool{false, true} {
		b := fake("ra")
		b.InRunErr = errors.New("running the probe: container is not running")
		b.ProbeErr = errors.New("starting the probe container: cannot join network of a non running container")
		discovered := 0
		b.OnDiscover = func(d *checks.Deployment) {
			if discovered++; discovered > 1 && ends {
				d.Runs[0].Running = false // gone by the time the audit looks again
			}
		}
		rep := audit(t, b, config(func(c *checks.Config) { c.RunID = "ra" }))
		for _, c := range rep.Projects[0].Checks {
			if !strings.HasPrefix(c.Vantage, "run:") && !strings.HasPrefix(c.Vantage, "in-container:") {
				continue
			}
			if ends {
				assert.Equal(t, report.Skip, c.Status, "%s %s: %s", c.ID, c.Vantage, c.Message)
				assert.Contains(t, c.Message, "the run ended while it was audited")
			} else {
				assert.Equal(t, report.Error, c.Status, "%s %s: the run still runs", c.ID, c.Vantage)
			}
		}
	}
}
