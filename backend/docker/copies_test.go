package docker

import (
	"context"
	"errors"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeDiffer struct {
	changes []container.FilesystemChange
	err     error
}

func (f fakeDiffer) ContainerDiff(context.Context, string) ([]container.FilesystemChange, error) {
	return f.changes, f.err
}

func TestCopiesIn(t *testing.T) {
	const a, b = "0123456789ab", "ba9876543210"
	changes := []container.FilesystemChange{
		{Kind: container.ChangeAdd, Path: "/.sba-probe-" + a},
		{Kind: container.ChangeAdd, Path: "/.sba-plan-" + a + ".json"},
		{Kind: container.ChangeAdd, Path: "/.sba-net-" + b + ".json"},
		{Kind: container.ChangeAdd, Path: "/.sba-root-" + b + ".json"},
		{Kind: container.ChangeModify, Path: "/.sba-probe-" + b},
		{Kind: container.ChangeDelete, Path: "/.sba-plan-" + b + ".json"}, // already gone
		{Kind: container.ChangeAdd, Path: "/.sba-notes"},                  // not an audit's name
		{Kind: container.ChangeAdd, Path: "/.sba-probe-" + a + "x"},
		{Kind: container.ChangeAdd, Path: "/tmp/.sba-probe-" + a}, // copies go to the root only
		{Kind: container.ChangeAdd, Path: "/.sba-probe-0123456789AB"},
		{Kind: container.ChangeAdd, Path: "/work/repo"},
	}
	got, err := copiesIn(context.Background(), fakeDiffer{changes: changes}, "id", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"/.sba-probe-" + a, "/.sba-plan-" + a + ".json", "/.sba-net-" + b + ".json",
		"/.sba-root-" + b + ".json", "/.sba-probe-" + b}, got)

	got, err = copiesIn(context.Background(), fakeDiffer{changes: changes}, "id", b)
	require.NoError(t, err)
	assert.Equal(t, []string{"/.sba-net-" + b + ".json", "/.sba-root-" + b + ".json", "/.sba-probe-" + b}, got, "only that audit's")

	_, err = copiesIn(context.Background(), fakeDiffer{err: errors.New("gone")}, "id", "")
	assert.Error(t, err)
}
