package docker

import (
	"context"

	"github.com/ssebench-audit/ssebench-audit/images"
)

// EnsureProbeImage builds the probe image from the probe's executable (the
// probe binary beside the tool, else the tool) unless an image with its
// content-hash tag exists.
func EnsureProbeImage(ctx context.Context, api images.Builder, tool string) (string, bool, error) {
	binary, err := images.ProbeExecutable(tool)
	if err != nil {
		return "", false, err
	}
	return images.Ensure(ctx, api, images.Spec{Repo: "ssebench-audit-probe", Dockerfile: images.ProbeDockerfile,
		Binary: binary, Labels: map[string]string{LabelProbe: "image"}})
}
