// Package checks is the host side of the audit: discovery through the Docker
// API, the checks of the catalogue, the vantage points the active checks run
// from, and the verdicts.
package checks

import (
	"context"
	"io"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ssebench-audit/ssebench-audit/images"
)

// Docker is the part of the Docker API the audit uses; *client.Client
// satisfies it and unit tests pass fakes.
type Docker interface {
	images.Builder
	ServerVersion(ctx context.Context) (types.Version, error)
	NetworkList(ctx context.Context, options network.ListOptions) ([]network.Summary, error)
	NetworkInspect(ctx context.Context, networkID string, options network.InspectOptions) (network.Inspect, error)
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
	ContainerInspect(ctx context.Context, containerID string) (container.InspectResponse, error)
	ContainerCreate(ctx context.Context, config *container.Config, hostConfig *container.HostConfig, networkingConfig *network.NetworkingConfig, platform *ocispec.Platform, containerName string) (container.CreateResponse, error)
	ContainerStart(ctx context.Context, containerID string, options container.StartOptions) error
	ContainerWait(ctx context.Context, containerID string, condition container.WaitCondition) (<-chan container.WaitResponse, <-chan error)
	ContainerLogs(ctx context.Context, containerID string, options container.LogsOptions) (io.ReadCloser, error)
	ContainerRemove(ctx context.Context, containerID string, options container.RemoveOptions) error
	ContainerDiff(ctx context.Context, containerID string) ([]container.FilesystemChange, error)
	CopyToContainer(ctx context.Context, containerID, dstPath string, content io.Reader, options container.CopyToContainerOptions) error
	ContainerExecCreate(ctx context.Context, containerID string, options container.ExecOptions) (container.ExecCreateResponse, error)
	ContainerExecAttach(ctx context.Context, execID string, config container.ExecAttachOptions) (types.HijackedResponse, error)
}

// Labels the audit puts on, and looks for on, Docker objects.
const (
	LabelProbe   = "ssebench-audit.probe"   // = audit id, on every object the audit creates
	LabelVantage = "ssebench-audit.vantage" // which vantage point a probe container is
	LabelProject = "ssebench-audit.project" // which project it audits

	LabelComposeProject = "com.docker.compose.project"
	LabelComposeService = "com.docker.compose.service"
	LabelComposeNetwork = "com.docker.compose.network"

	LabelRunID  = "ssebench.run-id"
	LabelWebUI  = "ssebench.webui"
	LabelRun    = "ssebench.run"
	LabelTaskID = "ssebench.task-id"
)

// ssebench's fixed names and ports (ssebench-facts.md).
const (
	ServiceProxy = "litellm"
	ServiceDB    = "litellm_db"
	ProxyPort    = 4000
	DaemonPort   = 4263
	DBPort       = 5432
)
