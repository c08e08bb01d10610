// Package images builds the tool's images (probe, fixture stubs) from a
// static executable and an embedded Dockerfile, with no registry: the build
// context is an in-memory tar holding just the Dockerfile and the binary.
package images

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

//go:embed probe.Dockerfile
var ProbeDockerfile []byte

//go:embed fixture.Dockerfile
var FixtureDockerfile []byte

// Builder is the part of the Docker API an image build needs.
type Builder interface {
	ImageInspect(ctx context.Context, ref string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImageBuild(ctx context.Context, buildContext io.Reader, options build.ImageBuildOptions) (build.ImageBuildResponse, error)
}

// Spec is one image to build from a binary.
type Spec struct {
	Repo       string            // e.g. "ssebench-audit-probe"
	Dockerfile []byte            // COPY ssebench-audit /ssebench-audit
	Binary     string            // path of the static executable
	Labels     map[string]string // put on the image
}

// Ensure returns the image reference for spec, building it unless an image
// with that content-hash tag exists already. built says whether it built.
func Ensure(ctx context.Context, api Builder, spec Spec) (ref string, built bool, err error) {
	// Every audit hashes the executable; only a build reads it whole.
	f, err := os.Open(spec.Binary)
	if err != nil {
		return "", false, fmt.Errorf("reading the executable: %w", err)
	}
	defer f.Close()
	if err := checkStatic(f); err != nil {
		return "", false, err
	}
	sum := sha256.New()
	sum.Write(spec.Dockerfile)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", false, err
	}
	if _, err := io.Copy(sum, f); err != nil {
		return "", false, fmt.Errorf("reading the executable: %w", err)
	}
	ref = spec.Repo + ":" + hex.EncodeToString(sum.Sum(nil))[:16]

	if _, err := api.ImageInspect(ctx, ref); err == nil {
		return ref, false, nil
	} else if !cerrdefs.IsNotFound(err) {
		return "", false, fmt.Errorf("inspecting image %s: %w", ref, err)
	}

	bin, err := os.ReadFile(spec.Binary)
	if err != nil {
		return "", false, fmt.Errorf("reading the executable: %w", err)
	}
	buildCtx, err := contextTar(spec.Dockerfile, bin)
	if err != nil {
		return "", false, err
	}
	resp, err := api.ImageBuild(ctx, buildCtx, build.ImageBuildOptions{
		Tags:        []string{ref},
		Labels:      spec.Labels,
		Remove:      true,
		ForceRemove: true,
		PullParent:  false,
	})
	if err != nil {
		return "", false, fmt.Errorf("building image %s: %w", ref, err)
	}
	defer resp.Body.Close()
	if err := drainBuild(resp.Body); err != nil {
		return "", false, fmt.Errorf("building image %s: %w", ref, err)
	}
	return ref, true, nil
}

// checkStatic refuses a dynamically linked binary: it would not start in a
// FROM scratch image, and the failure would look like a blocked network.
func checkStatic(r io.ReaderAt) error {
	f, err := elf.NewFile(r)
	if err != nil {
		return fmt.Errorf("the executable is not a Linux ELF binary (%v); pass --probe-image", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("the executable is dynamically linked; build it with CGO_ENABLED=0 or pass --probe-image")
		}
	}
	return nil
}

func contextTar(dockerfile, bin []byte) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"Dockerfile", 0o644, dockerfile}, {"ssebench-audit", 0o755, bin}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}

// drainBuild reads the build's JSON message stream to its end (the build is
// not finished before) and returns the first error it reports.
func drainBuild(r io.Reader) error {
	dec := json.NewDecoder(io.LimitReader(r, 16<<20))
	var last string
	for {
		var msg struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading build output: %w (last: %s)", err, last)
		}
		if msg.Error != "" {
			return errors.New(strings.TrimSpace(msg.Error))
		}
		if s := strings.TrimSpace(msg.Stream); s != "" {
			last = s
		}
	}
}
