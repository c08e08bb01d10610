package docker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lateEngine is a fake engine on which a probe appears only on the third
// listing: a create the engine finished after its client gave up.
type lateEngine struct {
	API     // unused methods panic
	mu      sync.Mutex
	lists   int
	removed []string
}

func (e *lateEngine) ContainerList(context.Context, container.ListOptions) ([]container.Summary, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lists++
	if e.lists == 3 && len(e.removed) == 0 {
		return []container.Summary{{ID: "late"}}, nil
	}
	return nil, nil
}

func (e *lateEngine) ContainerRemove(_ context.Context, id string, _ container.RemoveOptions) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removed = append(e.removed, id)
	return nil
}

func TestSweepWaitsForLateCreates(t *testing.T) {
	e := &lateEngine{}
	n, err := sweep(context.Background(), e, time.Second, LabelProbe+"=x")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, []string{"late"}, e.removed)

	// Without settling, a clean audit's sweep lists once and is done.
	e = &lateEngine{}
	n, err = sweep(context.Background(), e, 0, LabelProbe+"=x")
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, 1, e.lists)
}

type imageEngine struct {
	listed  []string
	removed []string
	inUse   map[string]bool
}

func (e *imageEngine) ImageList(context.Context, image.ListOptions) ([]image.Summary, error) {
	var out []image.Summary
	for _, id := range e.listed {
		out = append(out, image.Summary{ID: id})
	}
	return out, nil
}

func (e *imageEngine) ImageRemove(_ context.Context, id string, o image.RemoveOptions) ([]image.DeleteResponse, error) {
	if e.inUse[id] && !o.Force {
		return nil, errors.New("conflict: image is being used by a container")
	}
	e.removed = append(e.removed, id)
	return nil, nil
}

func TestRemoveProbeImagesLeavesImagesInUse(t *testing.T) {
	e := &imageEngine{listed: []string{"a", "b"}, inUse: map[string]bool{"b": true}}
	n, err := RemoveProbeImages(context.Background(), e)
	assert.Equal(t, 1, n)
	assert.Error(t, err)
	assert.Equal(t, []string{"a"}, e.removed)
}
