package checks

import (
	"context"

	"github.com/docker/docker/api/types/container"
)

// Sweep removes every probe container labelled with auditID ("" = of any
// audit) and returns how many it removed.
func Sweep(ctx context.Context, api Docker, auditID string) (int, error) {
	sel := LabelProbe
	if auditID != "" {
		sel += "=" + auditID
	}
	list, err := api.ContainerList(ctx, container.ListOptions{All: true, Filters: listFilter(sel)})
	if err != nil {
		return 0, err
	}
	n := 0
	var first error
	for _, c := range list {
		if err := api.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		n++
	}
	return n, first
}
