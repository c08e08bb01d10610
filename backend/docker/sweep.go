package docker

import (
	"context"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
)

// Sweep removes every probe container labelled with auditID ("" = of any
// audit) and returns how many it removed.
func (b *Backend) Sweep(ctx context.Context, auditID string) (int, error) {
	sel := LabelProbe
	if auditID != "" {
		sel += "=" + auditID
	}
	return sweep(ctx, b.api, settleAfterCrash, sel)
}

// SweepProject removes the probe containers of every audit of one project.
func (b *Backend) SweepProject(ctx context.Context, project string) (int, error) {
	return sweep(ctx, b.api, settleAfterCrash, LabelProbe, LabelProject+"="+project)
}

// How long a sweep keeps looking for creates that were still under way:
// an engine finishes a create whose client was killed, and the container
// appears after the first listing; on an engine busy with other work a
// create can take seconds.
const (
	settleAfterCrash = 5 * time.Second
	sweepInterval    = 250 * time.Millisecond
)

// sweep removes what the selectors match, listing again until nothing is
// left and settle has passed.
func sweep(ctx context.Context, api API, settle time.Duration, selectors ...string) (int, error) {
	start := time.Now()
	total := 0
	var first error
	for {
		list, err := api.ContainerList(ctx, container.ListOptions{All: true, Filters: labelFilter(selectors...)})
		if err != nil {
			return total, err
		}
		for _, c := range list {
			err := api.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
			switch {
			case err == nil:
				total++
			case cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err):
				// gone already, or its removal is under way
			case first == nil:
				first = err
			}
		}
		if len(list) == 0 && time.Since(start) >= settle {
			return total, first
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(sweepInterval):
		}
	}
}

// ImageRemover is the part of the Docker API that removing probe images needs.
type ImageRemover interface {
	ImageList(ctx context.Context, options image.ListOptions) ([]image.Summary, error)
	ImageRemove(ctx context.Context, imageID string, options image.RemoveOptions) ([]image.DeleteResponse, error)
}

// RemoveProbeImages removes the probe images the tool built (they are kept
// between audits as a cache, one per build of the tool). One still used by
// a container is left.
func RemoveProbeImages(ctx context.Context, api ImageRemover) (int, error) {
	list, err := api.ImageList(ctx, image.ListOptions{Filters: labelFilter(LabelProbe + "=image")})
	if err != nil {
		return 0, err
	}
	n := 0
	var first error
	for _, im := range list {
		if _, err := api.ImageRemove(ctx, im.ID, image.RemoveOptions{PruneChildren: true}); err != nil {
			if first == nil && !cerrdefs.IsNotFound(err) {
				first = err
			}
			continue
		}
		n++
	}
	return n, first
}
