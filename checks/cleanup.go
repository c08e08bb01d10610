package checks

import (
	"context"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/docker/docker/api/types/container"
)

// Sweep removes every probe container labelled with auditID ("" = of any
// audit) and returns how many it removed.
func Sweep(ctx context.Context, api Docker, auditID string) (int, error) {
	sel := LabelProbe
	if auditID != "" {
		sel += "=" + auditID
	}
	return sweep(ctx, api, sel)
}

// SweepProject removes the probe containers of every audit of one project.
func SweepProject(ctx context.Context, api Docker, project string) (int, error) {
	return sweep(ctx, api, LabelProbe, LabelProject+"="+project)
}

// sweep removes the probes the selectors match. A create the engine was
// still carrying out for a killed audit lands after the first listing, so
// it lists again until a pass finds nothing (a few passes at most).
func sweep(ctx context.Context, api Docker, selectors ...string) (int, error) {
	total := 0
	var first error
	for pass := 0; pass < 4; pass++ {
		if pass > 0 {
			select {
			case <-ctx.Done():
				return total, ctx.Err()
			case <-time.After(300 * time.Millisecond):
			}
		}
		list, err := api.ContainerList(ctx, container.ListOptions{All: true, Filters: listFilter(selectors...)})
		if err != nil {
			return total, err
		}
		if len(list) == 0 {
			return total, first
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
	}
	return total, first
}
