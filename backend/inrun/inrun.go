// Package inrun is how an audit's probe goes into a live run, whatever the
// backend: the files copied in (the probe and its plans, named after the
// audit so that a sweep finds what a crash left), as one tar, and the one
// command line, run as root, that runs them and removes them.
package inrun

import (
	"archive/tar"
	"encoding/json"
	"io"
	"sort"

	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// File is one file to copy in.
type File struct {
	Mode int64
	Data []byte
}

// Tar streams a tar of files (names relative to the root): the binary
// copied into every run is written from the one shared slice, never
// buffered once per run. Executables come first: where the probe is not
// in a run, no file of the same copy is (a removal relies on it).
func Tar(files map[string]File) io.Reader {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		xi, xj := files[names[i]].Mode&0o111 != 0, files[names[j]].Mode&0o111 != 0
		if xi != xj {
			return xi
		}
		return names[i] < names[j]
	})
	r, w := io.Pipe()
	go func() {
		tw := tar.NewWriter(w)
		for _, n := range names {
			f := files[n]
			if err := tw.WriteHeader(&tar.Header{Name: n, Mode: f.Mode, Size: int64(len(f.Data))}); err != nil {
				w.CloseWithError(err)
				return
			}
			if _, err := tw.Write(f.Data); err != nil {
				w.CloseWithError(err)
				return
			}
		}
		w.CloseWithError(tw.Close())
	}()
	return r
}

// CopiedPath names a file an audit copies into a run, at its root (it
// exists in every image, /tmp does not): /.sba-<kind>-<audit id>.
func CopiedPath(auditID, kind string) string {
	return "/" + probes.CopiedPrefix + kind + "-" + auditID
}

// Invocation is one exec's worth of probe in a run: what to copy in (by
// path relative to the root), the command that runs it as root, and what
// that command removes once done.
type Invocation struct {
	Files  map[string]File
	Cmd    []string
	Self   string   // the probe's path in the run
	Copied []string // every copied path, the probe's own among them
}

// New lays out work for the audit's probe binary bin.
func New(auditID string, bin []byte, work checks.InRunWork) (Invocation, error) {
	self := CopiedPath(auditID, "probe")
	planPath := CopiedPath(auditID, "plan") + ".json"
	rootPath := CopiedPath(auditID, "root") + ".json"
	inv := Invocation{Files: map[string]File{self[1:]: {Mode: 0o755, Data: bin}}, Self: self, Copied: []string{self, planPath},
		Cmd: []string{self, "probe", "--plan", planPath}}
	for path, plan := range map[string]*probes.Plan{planPath: &work.AsUsers, rootPath: work.AsRoot} {
		if plan == nil {
			continue
		}
		data, err := json.Marshal(plan)
		if err != nil {
			return Invocation{}, err
		}
		inv.Files[path[1:]] = File{Mode: 0o444, Data: data}
	}
	if work.AsRoot != nil {
		inv.Copied = append(inv.Copied, rootPath)
		inv.Cmd = append(inv.Cmd, "--root-plan", rootPath)
	}
	for _, p := range inv.Copied {
		inv.Cmd = append(inv.Cmd, "--remove", p)
	}
	for _, u := range work.Users {
		inv.Cmd = append(inv.Cmd, "--as", u)
	}
	if work.Then {
		inv.Cmd = append(inv.Cmd, "--then-stdin")
	}
	return inv, nil
}

// RemoveCmd is the command that stops a probe still running any of paths
// and removes paths, run from the copied probe at self.
func RemoveCmd(self string, paths []string) []string {
	cmd := []string{self, "probe"}
	for _, p := range paths {
		cmd = append(cmd, "--remove", p)
	}
	return cmd
}
