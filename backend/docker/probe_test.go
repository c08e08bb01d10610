package docker

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// slowCreateEngine completes a create only when released, as an engine
// busy with other work does; a client that gives up first gets its
// context's error, and the container still appears.
type slowCreateEngine struct {
	API
	called  chan struct{} // closed when the create arrives
	release chan struct{} // closed to let it complete
	mu      sync.Mutex
	live    map[string]bool
	created int
}

func (e *slowCreateEngine) ImageInspect(context.Context, string, ...client.ImageInspectOption) (image.InspectResponse, error) {
	return image.InspectResponse{ID: "sha256:probe"}, nil
}

func (e *slowCreateEngine) ContainerCreate(ctx context.Context, _ *container.Config, _ *container.HostConfig, _ *network.NetworkingConfig, _ *ocispec.Platform, _ string) (container.CreateResponse, error) {
	close(e.called)
	done := make(chan struct{})
	go func() {
		<-e.release
		e.mu.Lock()
		e.live["probe"] = true
		e.created++
		e.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return container.CreateResponse{ID: "probe"}, nil
	case <-ctx.Done():
		return container.CreateResponse{}, ctx.Err()
	}
}

func (e *slowCreateEngine) CopyToContainer(ctx context.Context, _, _ string, content io.Reader, _ container.CopyToContainerOptions) error {
	_, _ = io.Copy(io.Discard, content)
	return ctx.Err()
}

func (e *slowCreateEngine) ContainerList(context.Context, container.ListOptions) ([]container.Summary, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var list []container.Summary
	for id := range e.live {
		list = append(list, container.Summary{ID: id})
	}
	return list, nil
}

func (e *slowCreateEngine) ContainerRemove(_ context.Context, id string, _ container.RemoveOptions) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.live, id)
	return nil
}

// Ctrl-C during a probe container's create: the create is not cut short,
// Close waits for it, and the container is removed; none appears after
// the audit ended.
func TestInterruptedCreateIsRemoved(t *testing.T) {
	e := &slowCreateEngine{called: make(chan struct{}), release: make(chan struct{}), live: map[string]bool{}}
	s := &session{api: e, opts: Options{ProbeImage: "probe"}, auditID: "a", timeout: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	probed := make(chan error)
	go func() {
		_, err := s.Probe(ctx, "p", checks.Vantage{Name: checks.VantageFresh}, probes.Plan{}, nil)
		probed <- err
	}()
	<-e.called
	cancel()
	go func() {
		time.Sleep(100 * time.Millisecond)
		close(e.release)
	}()
	// What the engine holds when Close returns is what the process leaves
	// when it exits right after.
	require.NoError(t, s.Close(ctx, true))
	e.mu.Lock()
	created, left := e.created, len(e.live)
	e.mu.Unlock()
	assert.Equal(t, 1, created, "Close returned before the create under way completed")
	assert.Zero(t, left, "the probe container was left behind")
	require.Error(t, <-probed, "an interrupted probe reports no result")

	// A probe asked for once the session is closing makes nothing.
	_, err := s.Probe(context.Background(), "p", checks.Vantage{Name: checks.VantageFresh}, probes.Plan{}, nil)
	assert.ErrorContains(t, err, "the audit is ending")
}
