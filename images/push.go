package images

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ProbeEntrypoint is how the probe image starts, as probe.Dockerfile says.
var ProbeEntrypoint = []string{"/ssebench-audit", "probe"}

// OCIProbeImage is the probe image as probe.Dockerfile builds it (the
// static binary at /ssebench-audit, run as root with `probe`), made
// without a Docker engine: for a registry a cluster pulls from.
func OCIProbeImage(binary []byte, labels map[string]string) (v1.Image, error) {
	return FromBinary(binary, "ssebench-audit", ProbeEntrypoint, labels)
}

// FromBinary is a FROM-scratch image of one static binary at /path, run as
// root with entrypoint. Its layer's times are fixed, so that one binary
// gives one digest.
func FromBinary(binary []byte, path string, entrypoint []string, labels map[string]string) (v1.Image, error) {
	if err := checkStatic(bytes.NewReader(binary)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: path, Mode: 0o755, Size: int64(len(binary)),
		ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config.Entrypoint = entrypoint
	cfg.Config.User = "0:0"
	cfg.Config.Labels = labels
	return mutate.ConfigFile(img, cfg)
}

// Push writes img to the registry as ref, with the credentials `docker
// login` left (the default keychain), and returns the pushed reference by
// digest. A registry on loopback is spoken to over plain HTTP, as docker
// does; insecure allows it elsewhere.
func Push(ctx context.Context, img v1.Image, ref string, insecure bool) (string, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return "", fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	if err := remote.Write(r, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", fmt.Errorf("pushing %s: %w", r, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return r.Context().Digest(d.String()).String(), nil
}
