// Package tests holds the end-to-end tests: the real binary against a real
// Docker engine, real networks, real containers, and a network namespace that
// stands in for the internet. Nothing here sends traffic off this machine.
package tests

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	dimage "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/ssebench-audit/ssebench-audit/backend/docker"
	"github.com/ssebench-audit/ssebench-audit/fixtures"
)

// The suite's shared environment, made once in TestMain.
var (
	binary   string          // the real ssebench-audit, built from this tree
	ssebench string          // the ssebench stand-in (fixtures/ssebench)
	api      *client.Client  // the engine
	image    string          // the fixture stand-ins' image
	world    *fixtures.World // the internet stand-in
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sba-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "ssebench-audit")
	// Built as `make build` builds it: the binary the benchmark measures is
	// the one users run (stripped, it is also what audits copy into runs).
	// The probe alone goes beside it, as `make build` puts it: the tool
	// finds it there and puts it where agents stand.
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", dir+"/", "../cmd/ssebench-audit", "../cmd/ssebench-audit-probe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building ssebench-audit: %v\n%s", err, out)
		return 2
	}
	ssebench = filepath.Join(dir, "ssebench")
	build = exec.Command("go", "build", "-o", ssebench, "../fixtures/ssebench")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the ssebench stand-in: %v\n%s", err, out)
		return 2
	}
	// The end-to-end tests are the point of this package: without an engine
	// they fail rather than skip, so a CI without Docker cannot pass green.
	if api, err = client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation()); err != nil {
		fmt.Fprintln(os.Stderr, "docker client:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := api.Ping(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "the end-to-end tests need a Docker engine:", err)
		return 2
	}
	// The images this run builds (probe and fixture, tagged by the content
	// hash of this build) are removed at the end, as every other thing it makes.
	before := toolImages(ctx)
	defer removeNewImages(before)
	if image, err = fixtures.EnsureImage(ctx, api, binary); err != nil {
		fmt.Fprintln(os.Stderr, "fixture image:", err)
		return 2
	}
	// Guards a killed run of this suite left (their networks are gone).
	if _, err := fixtures.SweepGuards(ctx, api); err != nil {
		fmt.Fprintln(os.Stderr, "the fixtures' isolation guards need root and nft:", err)
		return 2
	}
	if world, err = fixtures.StartWorld(ctx, binary); err != nil {
		fmt.Fprintln(os.Stderr, "the internet stand-in needs root and ip netns:", err)
		return 2
	}
	// Built before (make cluster-build), or here: minutes on a cold cache.
	stopCluster, err := startCluster(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "the test cluster:", err)
		_ = world.Stop()
		return 2
	}
	// The node starts before any test runs, not when the first test needs
	// it: a start beside the Docker tests loads the machine while they probe.
	// A start that fails is reported by the tests that need the node.
	startNode()
	code := m.Run()
	if err := stopCluster(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if err := world.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the world:", err)
		code = 1
	}
	// Down removes each guard after its network (fixtures' own tests hold it
	// to that); what a teardown that failed left goes here.
	if _, err := fixtures.SweepGuards(context.Background(), api); err != nil {
		fmt.Fprintln(os.Stderr, "removing the fixtures' isolation guards:", err)
		code = 1
	}
	if left := leftoverProbes(context.Background()); len(left) > 0 {
		// Named with what they were for, so the test that left them can be found.
		fmt.Fprintf(os.Stderr, "%d audit probe containers were left behind:\n", len(left))
		for _, c := range left {
			fmt.Fprintln(os.Stderr, "  "+c)
		}
		code = 1
	}
	return code
}

// leftoverProbes describes the probe containers still on the engine: name,
// vantage, project, state and when they were made.
func leftoverProbes(ctx context.Context) []string {
	list, err := api.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", docker.LabelProbe))})
	if err != nil {
		return []string{"listing probe containers: " + err.Error()}
	}
	var left []string
	for _, c := range list {
		left = append(left, fmt.Sprintf("%v vantage=%s project=%s audit=%s state=%s created=%s", c.Names,
			c.Labels[docker.LabelVantage], c.Labels[docker.LabelProject], c.Labels[docker.LabelProbe], c.Status,
			time.Unix(c.Created, 0).UTC().Format(time.RFC3339)))
	}
	return left
}

// toolImages lists the IDs of the tool's images (probe and fixture).
func toolImages(ctx context.Context) map[string]bool {
	ids := map[string]bool{}
	for _, label := range []string{docker.LabelProbe, fixtures.LabelFixture} {
		list, err := api.ImageList(ctx, dimage.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", label))})
		if err != nil {
			continue
		}
		for _, im := range list {
			ids[im.ID] = true
		}
	}
	return ids
}

// removeNewImages removes the tool's images that were not there before; one
// still in use elsewhere is left (no force).
func removeNewImages(before map[string]bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for id := range toolImages(ctx) {
		if !before[id] {
			_, _ = api.ImageRemove(ctx, id, dimage.RemoveOptions{PruneChildren: true})
		}
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
