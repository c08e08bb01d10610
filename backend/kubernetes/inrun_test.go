package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

// fakeExec answers the execs InRun makes by what they run: the copy (tar),
// the probe, and the removal (the probe with only --remove).
type fakeExec struct {
	tar, probe, remove func(stdout io.Writer) error
	calls              []string
}

func (f *fakeExec) exec(_ context.Context, _, _, container string, cmd []string, stdin io.Reader, stdout, _ io.Writer) error {
	if container != taskContainer {
		return fmt.Errorf("exec into container %q", container)
	}
	switch {
	case cmd[0] == "tar":
		f.calls = append(f.calls, "tar")
		_, _ = io.Copy(io.Discard, stdin)
		return f.tar(stdout)
	case len(cmd) > 2 && cmd[2] == "--plan":
		f.calls = append(f.calls, "probe")
		return f.probe(stdout)
	default:
		f.calls = append(f.calls, "remove")
		return f.remove(stdout)
	}
}

func ok(io.Writer) error { return nil }

// inRunSession is a session whose authorizer answers allowed and whose
// execs go to f.
func inRunSession(t *testing.T, f *fakeExec, allowed bool) *session {
	t.Helper()
	api := fake.NewClientset()
	api.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
		r.Status.Allowed = allowed
		return true, r, nil
	})
	b, err := New(api, Options{Namespace: "runs", ProxySelector: DefaultProxySelector, ProxyPort: 4000, Exec: f.exec})
	require.NoError(t, err)
	s := b.Start("0123456789ab", time.Second).(*session)
	s.binOnce.Do(func() { s.bin = []byte("the probe") })
	return s
}

var work = checks.InRunWork{Users: []string{"1000:1000"}}

// Refused by the authorizer: nothing is copied, and it says why.
func TestInRunNotAllowed(t *testing.T) {
	f := &fakeExec{tar: ok, probe: ok, remove: ok}
	res := inRunSession(t, f, false).InRun(context.Background(), checks.Container{Name: "run-1"}, work)
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "may not exec")
	assert.Empty(t, f.calls)
	assert.Empty(t, res.Left)
}

// The probe reports and removes its copies: no more exec; it does not,
// and one more exec removes them; that fails too, and the copies are
// reported left, with why.
func TestInRunRemoval(t *testing.T) {
	report := func(removed bool) func(io.Writer) error {
		return func(w io.Writer) error {
			_, err := fmt.Fprintf(w, `{"users":[],"removed":%t}`+"\n", removed)
			return err
		}
	}
	f := &fakeExec{tar: ok, probe: report(true), remove: ok}
	res := inRunSession(t, f, true).InRun(context.Background(), checks.Container{Name: "run-1"}, work)
	require.NoError(t, res.Err)
	assert.Equal(t, []string{"tar", "probe"}, f.calls)

	f = &fakeExec{tar: ok, probe: report(false), remove: ok}
	res = inRunSession(t, f, true).InRun(context.Background(), checks.Container{Name: "run-1"}, work)
	require.NoError(t, res.Err)
	assert.Equal(t, []string{"tar", "probe", "remove"}, f.calls)
	assert.Empty(t, res.Left)

	f = &fakeExec{tar: ok, probe: report(false), remove: func(io.Writer) error { return errors.New("container is gone") }}
	res = inRunSession(t, f, true).InRun(context.Background(), checks.Container{Name: "run-1"}, work)
	assert.Len(t, res.Left, 2, "the probe and its plan")
	require.Error(t, res.RemoveErr)
	assert.Contains(t, res.RemoveErr.Error(), "container is gone")
}

// A container without tar: the copy never started, the removal finds no
// probe (the copy's first file), and nothing is said to be left.
func TestInRunWithoutTar(t *testing.T) {
	f := &fakeExec{tar: func(io.Writer) error { return errors.New(`exec: "tar": executable file not found in $PATH`) }, probe: ok}
	f.remove = func(io.Writer) error {
		return errors.New(`exec: "/.sba-probe-0123456789ab": stat /.sba-probe-0123456789ab: no such file or directory`)
	}
	res := inRunSession(t, f, true).InRun(context.Background(), checks.Container{Name: "run-1"}, work)
	require.Error(t, res.Err)
	assert.True(t, strings.Contains(res.Err.Error(), "tar"), res.Err)
	assert.Equal(t, []string{"tar", "remove"}, f.calls)
	assert.Empty(t, res.Left)
	assert.NoError(t, res.RemoveErr)
}
