package docker

import (
	"archive/tar"
	"io"
	"sort"
)

type tarFile struct {
	mode int64
	data []byte
}

// filesTar streams a tar of files: the binary copied into every run is
// written from the one shared slice, never buffered once per run.
func filesTar(files map[string]tarFile) io.Reader {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	r, w := io.Pipe()
	go func() {
		tw := tar.NewWriter(w)
		for _, n := range names {
			f := files[n]
			if err := tw.WriteHeader(&tar.Header{Name: n, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
				w.CloseWithError(err)
				return
			}
			if _, err := tw.Write(f.data); err != nil {
				w.CloseWithError(err)
				return
			}
		}
		w.CloseWithError(tw.Close())
	}()
	return r
}
