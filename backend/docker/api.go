// Package docker is the audit's Docker backend: it finds ssebench's Compose
// deployments through the Docker API and stands probes where their agents
// stand (probe containers on the agents network and in live runs'
// namespaces, and one exec into each live run), and removes all it made.
package docker

import (
	"context"
	"io"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/system"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ssebench-audit/ssebench-audit/images"
)

// API is the part of the Docker API the backend uses; *client.Client
// satisfies it and unit tests pass fakes.
type API interface {
	images.Builder
	ServerVersion(ctx context.Context) (types.Version, error)
	Info(ctx context.Context) (system.Info, error)
	NetworkList(ctx context.Context, options network.ListOptions) ([]network.Summary, error)
	NetworkInspect(ctx context.Context, networkID string, options network.InspectOptions) (network.Inspect, error)
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
	ContainerInspect(ctx context.Context, containerID string) (container.InspectResponse, error)
	ContainerCreate(ctx context.Context, config *container.Config, hostConfig *container.HostConfig, networkingConfig *network.NetworkingConfig, platform *ocispec.Platform, containerName string) (container.CreateResponse, error)
	ContainerStart(ctx context.Context, containerID string, options container.StartOptions) error
	ContainerLogs(ctx context.Context, containerID string, options container.LogsOptions) (io.ReadCloser, error)
	ContainerRemove(ctx context.Context, containerID string, options container.RemoveOptions) error
	ContainerDiff(ctx context.Context, containerID string) ([]container.FilesystemChange, error)
	CopyToContainer(ctx context.Context, containerID, dstPath string, content io.Reader, options container.CopyToContainerOptions) error
	ContainerExecCreate(ctx context.Context, containerID string, options container.ExecOptions) (container.ExecCreateResponse, error)
	ContainerExecAttach(ctx context.Context, execID string, config container.ExecAttachOptions) (types.HijackedResponse, error)
	ImageList(ctx context.Context, options image.ListOptions) ([]image.Summary, error)
	ImageRemove(ctx context.Context, imageID string, options image.RemoveOptions) ([]image.DeleteResponse, error)
	Events(ctx context.Context, options events.ListOptions) (<-chan events.Message, <-chan error)
}

// Labels the backend puts on, and looks for on, Docker objects.
const (
	LabelProbe   = "ssebench-audit.probe"   // = audit id, on every object an audit creates
	LabelVantage = "ssebench-audit.vantage" // which vantage point a probe container is
	LabelProject = "ssebench-audit.project" // which project it audits

	LabelComposeProject = "com.docker.compose.project"
	LabelComposeService = "com.docker.compose.service"
	LabelComposeNetwork = "com.docker.compose.network"

	// ssebench's labels on run containers (docs/ssebench.md).
	LabelRunID   = "ssebench.run-id"
	LabelWebUI   = "ssebench.webui"
	LabelRun     = "ssebench.run"
	LabelTaskID  = "ssebench.task-id"
	LabelResults = "ssebench.results"
)
