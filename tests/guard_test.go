package tests

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ssebench-audit/ssebench-audit/fixtures"
)

// The fixtures' isolation guard (fixtures/guard.go) holds while networks
// come and go: from a run of a guarded deployment, another project's proxy,
// published on the host's loopback, is never reached on its default-network
// address while a third network is created and removed again and again.
// Without the guard Docker 20.10 let such connects through (the test fails
// with IsolationGuard off in up): the flake this guard ended, where an
// audit of a correct deployment failed isolation.projects.
func TestIsolationGuardHoldsDuringNetworkChurn(t *testing.T) {
	t.Parallel()
	d := up(t, fixtures.Options{Runs: 1, SecondProject: true})
	target := net.JoinHostPort(d.Second.Proxy.IPs[d.Second.Default.Name], strconv.Itoa(fixtures.ProxyPort))
	run, err := api.ContainerInspect(context.Background(), d.Runs[0].ID)
	require.NoError(t, err)
	require.NotZero(t, run.State.Pid)

	var churning atomic.Bool
	churning.Store(true)
	churnDone := make(chan error, 1)
	go func() {
		defer churning.Store(false)
		churnDone <- churnNetworks(context.Background(), "sbae2e-churn-"+randHex(3), 25)
	}()
	attempts, reached := dialWhile(t, run.State.Pid, target, churning.Load)
	require.NoError(t, <-churnDone)
	t.Logf("%d connects to %s from %s while networks churned", attempts, target, d.Runs[0].Name)
	require.NotZero(t, attempts)
	assert.Zero(t, reached, "a guarded network reached another bridge's published proxy")
}

// churnNetworks creates and removes a network n times, labelled as a
// fixture so that a sweep finds one a killed test left.
func churnNetworks(ctx context.Context, name string, n int) error {
	for i := range n {
		resp, err := api.NetworkCreate(ctx, fmt.Sprintf("%s-%d", name, i), network.CreateOptions{
			Driver: "bridge", Labels: map[string]string{fixtures.LabelFixture: "e2e/churn"}})
		if err != nil {
			return err
		}
		if err := api.NetworkRemove(ctx, resp.ID); err != nil {
			return err
		}
	}
	return nil
}

// dialWhile dials addr from the network namespace of process pid, over and
// over while more() is true (and at least once), and counts the connects
// that completed.
func dialWhile(t *testing.T, pid int, addr string, more func() bool) (attempts, reached int) {
	t.Helper()
	type counts struct {
		attempts, reached int
		err               error
	}
	done := make(chan counts, 1)
	go func() {
		// The thread enters the run's namespace and is never used again:
		// a goroutine that returns still locked takes its thread with it.
		runtime.LockOSThread()
		var c counts
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err == nil {
			err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
			f.Close()
		}
		if err != nil {
			c.err = err
			done <- c
			return
		}
		for c.attempts == 0 || more() {
			c.attempts++
			// A socket belongs to the namespace of the thread that made it.
			if conn, err := net.DialTimeout("tcp4", addr, 200*time.Millisecond); err == nil {
				c.reached++
				conn.Close()
			}
		}
		done <- c
	}()
	c := <-done
	require.NoError(t, c.err, "entering the network namespace of pid %d", pid)
	return c.attempts, c.reached
}
