package images

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeBuilder records builds; known tags exist already.
type fakeBuilder struct {
	known  map[string]bool
	builds []map[string]int64 // file name -> size, per build
	tags   []string
}

func (f *fakeBuilder) ImageInspect(_ context.Context, ref string, _ ...client.ImageInspectOption) (image.InspectResponse, error) {
	if f.known[ref] {
		return image.InspectResponse{ID: "sha256:x"}, nil
	}
	return image.InspectResponse{}, cerrdefs.ErrNotFound
}

func (f *fakeBuilder) ImageBuild(_ context.Context, ctx io.Reader, o build.ImageBuildOptions) (build.ImageBuildResponse, error) {
	files := map[string]int64{}
	tr := tar.NewReader(ctx)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		files[h.Name] = h.Size
	}
	f.builds = append(f.builds, files)
	f.tags = append(f.tags, o.Tags...)
	return build.ImageBuildResponse{Body: io.NopCloser(strings.NewReader(`{"stream":"Successfully built"}` + "\n"))}, nil
}

func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() {}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644))
	bin := filepath.Join(dir, "x")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

func TestEnsureBuildsOnceByContentHash(t *testing.T) {
	bin := staticBinary(t)
	f := &fakeBuilder{known: map[string]bool{}}
	spec := Spec{Repo: "ssebench-audit-probe", Dockerfile: ProbeDockerfile, Binary: bin}
	ref, built, err := Ensure(context.Background(), f, spec)
	require.NoError(t, err)
	assert.True(t, built)
	assert.Regexp(t, `^ssebench-audit-probe:[0-9a-f]{16}$`, ref)
	require.Len(t, f.builds, 1)
	st, _ := os.Stat(bin)
	assert.Equal(t, map[string]int64{"Dockerfile": int64(len(ProbeDockerfile)), "ssebench-audit": st.Size()}, f.builds[0])

	f.known[ref] = true
	again, built, err := Ensure(context.Background(), f, spec)
	require.NoError(t, err)
	assert.False(t, built, "an image with this content hash is reused")
	assert.Equal(t, ref, again)

	other, _, err := Ensure(context.Background(), f, Spec{Repo: "ssebench-audit-probe", Dockerfile: FixtureDockerfile, Binary: bin})
	require.NoError(t, err)
	assert.NotEqual(t, ref, other, "the Dockerfile is part of the hash")
}

func TestEnsureRefusesWhatCannotRunFromScratch(t *testing.T) {
	f := &fakeBuilder{known: map[string]bool{}}
	notELF := filepath.Join(t.TempDir(), "script")
	require.NoError(t, os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755))
	_, _, err := Ensure(context.Background(), f, Spec{Repo: "r", Binary: notELF})
	assert.ErrorContains(t, err, "not a Linux ELF")
	if _, err := os.Stat("/bin/ls"); err == nil {
		_, _, err = Ensure(context.Background(), f, Spec{Repo: "r", Binary: "/bin/ls"})
		assert.ErrorContains(t, err, "dynamically linked")
	}
	assert.Empty(t, f.builds)
}
