package docker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/ssebench-audit/ssebench-audit/checks"
)

// Changes follows the engine's network events for a project's networks:
// a container connected or disconnected (which is also how a container
// attached at create shows its start and its stop). Each names the
// container's run ID or audit label, looked up as it comes.
// maxSeen bounds what Changes remembers of containers.
const maxSeen = 1 << 14

func (b *Backend) Changes(ctx context.Context, project string) (<-chan checks.Change, error) {
	f := filters.NewArgs(filters.Arg("type", string(events.NetworkEventType)),
		filters.Arg("event", string(events.ActionConnect)), filters.Arg("event", string(events.ActionDisconnect)))
	msgs, errs := b.api.Events(ctx, events.ListOptions{Since: fmt.Sprint(time.Now().Unix()), Filters: f})
	nets := map[string]bool{checks.AgentsName(project): true, checks.DefaultName(project): true}
	out := make(chan checks.Change)
	// Who a container was, by ID: it is often gone (removed) by the time
	// its disconnect comes, and would otherwise count as a stranger.
	seen := map[string]checks.Change{}
	go func() {
		defer close(out)
		send := func(c checks.Change) bool {
			select {
			case out <- c:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case err := <-errs:
				if ctx.Err() == nil {
					send(checks.Change{Err: fmt.Errorf("the engine's event stream ended: %w", err)})
				}
				return
			case m := <-msgs:
				name := m.Actor.Attributes["name"]
				if !nets[name] {
					continue
				}
				c := checks.Change{What: string(m.Action), Network: name, Container: m.Actor.Attributes["container"]}
				// Who it is: a container that is gone stays unknown, and so
				// counts as a change.
				id := c.Container
				if known, ok := seen[id]; ok {
					c.Container, c.RunID, c.Probe = known.Container, known.RunID, known.Probe
				} else {
					lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					if ci, err := b.api.ContainerInspect(lctx, id); err == nil {
						c.Container = strings.TrimPrefix(ci.Name, "/")
						if ci.Config != nil {
							c.RunID, c.Probe = ci.Config.Labels[LabelRunID], ci.Config.Labels[LabelProbe] != ""
						}
						if len(seen) < maxSeen {
							seen[id] = c
						}
					}
					cancel()
				}
				if !send(c) {
					return
				}
			}
		}
	}()
	return out, nil
}
