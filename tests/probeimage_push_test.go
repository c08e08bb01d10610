package tests

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dimage "github.com/docker/docker/api/types/image"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssebench-audit/ssebench-audit/fixtures"
	"github.com/ssebench-audit/ssebench-audit/report"
)

// `probe-image push` puts the probe in a registry, without the engine:
// the image holds the probe binary beside the tool and starts it as the
// built one does; an engine pulls it from there and an audit that uses it
// passes a correct deployment. The registry is go-containerregistry's,
// served by this test on loopback.
func TestProbeImagePush(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ref := host + "/ssebench-audit-probe:test"

	// No engine is needed: DOCKER_HOST points nowhere.
	noEngine := []string{"DOCKER_HOST=unix:///nonexistent/docker.sock"}
	r := runTool(t, noEngine, "probe-image", "push", ref)
	require.Equal(t, 0, r.code, r.stderr)
	pushed := strings.TrimSpace(r.stdout)
	assert.Regexp(t, `^`+host+`/ssebench-audit-probe@sha256:[0-9a-f]{64}$`, pushed)

	// What the registry holds: the probe binary, started as `probe`.
	pushedRef, err := name.ParseReference(pushed)
	require.NoError(t, err)
	img, err := remote.Image(pushedRef)
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, []string{"/ssebench-audit", "probe"}, cfg.Config.Entrypoint)
	assert.Equal(t, "0:0", cfg.Config.User)
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	require.NoError(t, err)
	assert.Equal(t, "ssebench-audit", hdr.Name)
	got, err := io.ReadAll(tr)
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(filepath.Dir(binary), "ssebench-audit-probe"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "the image's binary is the probe beside the tool")

	// Pushed twice, one digest: the image is made reproducibly.
	r = runTool(t, noEngine, "probe-image", "push", ref)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, pushed, strings.TrimSpace(r.stdout))

	// An engine pulls it (a registry on loopback is plain HTTP to it), and
	// it is a working probe.
	ctx := context.Background()
	pull, err := api.ImagePull(ctx, pushed, dimage.PullOptions{})
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, pull)
	pull.Close()
	t.Cleanup(func() { _, _ = api.ImageRemove(context.Background(), pushed, dimage.RemoveOptions{Force: true}) })
	d := up(t, fixtures.Options{Runs: 1})
	a := audit(t, d.Project, closedPort(t), "--probe-image", pushed)
	require.NotNil(t, a.report, a.stderr)
	assert.Equal(t, 0, a.code, "%v", failing(a.report))
	assert.Equal(t, report.VerdictPass, a.report.Verdict)

	r = runTool(t, noEngine, "probe-image", "push", "Not A Reference!")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "invalid image reference")
}
