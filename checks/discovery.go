package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
)

// Deployment is what discovery found of one Compose project.
type Deployment struct {
	Project string
	Agents  *network.Inspect // nil when the network does not exist
	Default *network.Inspect
	Proxy   *container.InspectResponse // service litellm, nil when absent
	DB      *container.InspectResponse // service litellm_db
	Runs    []container.InspectResponse
	// Containers maps every running container's ID to its summary, for
	// telling network members apart.
	Containers map[string]container.Summary
	// Others are containers of other Compose projects and runs on other
	// projects' networks: targets of isolation.projects.
	Others []container.InspectResponse
}

// AgentsName is the agents network's name under Compose's naming.
func AgentsName(project string) string  { return project + "_agents" }
func DefaultName(project string) string { return project + "_default" }

// Projects lists the Compose projects that have an agents network.
func Projects(ctx context.Context, api Docker) ([]string, error) {
	nets, err := api.NetworkList(ctx, network.ListOptions{})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, n := range nets {
		p := n.Labels[LabelComposeProject]
		if p != "" && (n.Labels[LabelComposeNetwork] == "agents" || n.Name == AgentsName(p)) {
			seen[p] = true
		}
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// Discover finds the project's networks, proxy, database, runs and the
// containers of other projects.
func Discover(ctx context.Context, api Docker, project string) (*Deployment, error) {
	d := &Deployment{Project: project, Containers: map[string]container.Summary{}}

	nets, err := api.NetworkList(ctx, network.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	for _, n := range nets {
		var slot **network.Inspect
		switch {
		case isProjectNetwork(n, project, "agents"):
			slot = &d.Agents
		case isProjectNetwork(n, project, "default"):
			slot = &d.Default
		default:
			continue
		}
		ni, err := api.NetworkInspect(ctx, n.ID, network.InspectOptions{})
		if cerrdefs.IsNotFound(err) {
			continue // removed between list and inspect
		} else if err != nil {
			return nil, fmt.Errorf("inspecting network %s: %w", n.Name, err)
		}
		*slot = &ni
	}

	list, err := api.ContainerList(ctx, container.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	projectNets := map[string]bool{}
	for _, n := range []*network.Inspect{d.Agents, d.Default} {
		if n != nil {
			projectNets[n.Name] = true
		}
	}
	for _, c := range list {
		d.Containers[c.ID] = c
		if c.Labels[LabelProbe] != "" {
			continue // audit probes, ours or a concurrent audit's
		}
		cp := c.Labels[LabelComposeProject]
		isRun := IsRun(c.Labels)
		onProject := false
		if c.NetworkSettings != nil {
			for name := range c.NetworkSettings.Networks {
				onProject = onProject || projectNets[name]
			}
		}
		mine := cp == project || (isRun && onProject)
		if !mine && cp == "" && !isRun {
			continue // not a Compose or ssebench container: not ours to touch
		}
		ci, err := api.ContainerInspect(ctx, c.ID)
		if cerrdefs.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("inspecting container %s: %w", c.ID[:12], err)
		}
		switch {
		case !mine:
			d.Others = append(d.Others, ci)
		case isRun:
			d.Runs = append(d.Runs, ci)
		case c.Labels[LabelComposeService] == ServiceProxy:
			d.Proxy = &ci
		case c.Labels[LabelComposeService] == ServiceDB:
			d.DB = &ci
		}
	}
	if err := d.completeMembers(ctx, api); err != nil {
		return nil, err
	}
	sort.Slice(d.Runs, func(i, j int) bool { return RunName(d.Runs[i]) < RunName(d.Runs[j]) })
	return d, nil
}

// completeMembers looks up agents-network endpoints the container list did
// not show: a container is on the network while it starts, before it lists
// as running (a run being started, a concurrent audit's probe). One that is
// gone by now is dropped; the others are judged by their labels.
func (d *Deployment) completeMembers(ctx context.Context, api Docker) error {
	if d.Agents == nil {
		return nil
	}
	for id := range d.Agents.Containers {
		if _, ok := d.Containers[id]; ok {
			continue
		}
		ci, err := api.ContainerInspect(ctx, id)
		if cerrdefs.IsNotFound(err) {
			delete(d.Agents.Containers, id)
			continue
		} else if err != nil {
			return fmt.Errorf("inspecting container %s: %w", shortID(id), err)
		}
		var labels map[string]string
		if ci.Config != nil {
			labels = ci.Config.Labels
		}
		d.Containers[id] = container.Summary{ID: id, Names: []string{ci.Name}, Labels: labels}
	}
	return nil
}

func isProjectNetwork(n network.Summary, project, role string) bool {
	if n.Labels[LabelComposeProject] == project && n.Labels[LabelComposeNetwork] == role {
		return true
	}
	// Stacks made without Compose labels still follow its naming.
	return n.Name == project+"_"+role && n.Labels[LabelComposeProject] == ""
}

// IsRun says whether labels mark an ssebench run container (the daemon's
// container, or either container of a sidecar pair).
func IsRun(labels map[string]string) bool {
	return labels[LabelRunID] != "" || labels[LabelRun] != "" || labels[LabelWebUI] == "true"
}

// RunName names a run container in reports: its run ID, else its pair ID.
func RunName(c container.InspectResponse) string {
	if c.Config != nil {
		if id := c.Config.Labels[LabelRunID]; id != "" {
			return id
		}
		if id := c.Config.Labels[LabelRun]; id != "" {
			return id + "/" + strings.TrimPrefix(c.Name, "/")
		}
	}
	return strings.TrimPrefix(c.Name, "/")
}

// RunsByID returns the run containers of one run ID: one in sandbox mode,
// both of a sidecar pair (found by its pair label) in sidecar mode.
func (d *Deployment) RunsByID(runID string) []container.InspectResponse {
	pair := ""
	for _, r := range d.Runs {
		if r.Config != nil && r.Config.Labels[LabelRunID] == runID {
			pair = r.Config.Labels[LabelRun]
		}
	}
	var out []container.InspectResponse
	for _, r := range d.Runs {
		if r.Config != nil && (r.Config.Labels[LabelRunID] == runID || (pair != "" && r.Config.Labels[LabelRun] == pair)) {
			out = append(out, r)
		}
	}
	return out
}

// ContainerName is a container's name without Docker's leading slash.
func ContainerName(c container.InspectResponse) string { return strings.TrimPrefix(c.Name, "/") }

// Restricted says whether a run is on the project's agents network (a
// restricted run); open runs are on default only and expected to reach out.
func (d *Deployment) Restricted(run container.InspectResponse) bool {
	if d.Agents == nil || run.NetworkSettings == nil {
		return false
	}
	_, ok := run.NetworkSettings.Networks[d.Agents.Name]
	return ok
}

// IPv6 says whether the agents network has IPv6 enabled.
func (d *Deployment) IPv6() bool { return d.Agents != nil && d.Agents.EnableIPv6 }

// Families are the address families the audit probes on this deployment.
func (d *Deployment) Families() []string {
	if d.IPv6() {
		return []string{"ipv4", "ipv6"}
	}
	return []string{"ipv4"}
}

// ProxyIP is the proxy's address on the agents network, "" when unknown.
func (d *Deployment) ProxyIP() string {
	if d.Proxy == nil || d.Agents == nil || d.Proxy.NetworkSettings == nil {
		return ""
	}
	if ep, ok := d.Proxy.NetworkSettings.Networks[d.Agents.Name]; ok && ep != nil {
		return ep.IPAddress
	}
	return ""
}

// listFilter is a small helper for label filters.
func listFilter(kv ...string) filters.Args {
	a := filters.NewArgs()
	for _, s := range kv {
		a.Add("label", s)
	}
	return a
}
