package docker

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/docker/docker/api/types/container"

	"github.com/ssebench-audit/ssebench-audit/backend/inrun"
	"github.com/ssebench-audit/ssebench-audit/checks"
	"github.com/ssebench-audit/ssebench-audit/probes"
)

// copiedName matches what an audit copies into a run (copiedPath):
// /.sba-probe-<audit id>, /.sba-plan-<audit id>.json, /.sba-root-<audit
// id>.json (and /.sba-net-<audit id>.json, which earlier versions copied).
var copiedName = regexp.MustCompile(`^/` + regexp.QuoteMeta(probes.CopiedPrefix) + `(?:probe|plan|root|net)-([0-9a-f]{12})(?:\.json)?$`)

// SweepCopies removes from the live runs of projects (of every project when
// none is given) the files an audit copied in and a crash left there: an
// audit killed between its copy and its exec. With auditID, only that
// audit's. A fresh copy of this executable does the removing, and stops a
// left probe still running; it returns how many files were removed.
func (b *Backend) SweepCopies(ctx context.Context, projects []string, auditID string) (int, error) {
	if len(projects) == 0 {
		var err error
		if projects, err = b.Projects(ctx); err != nil {
			return 0, err
		}
	}
	var bin []byte
	// The remover is named as an audit's probe, so a cleanup that dies in
	// turn leaves nothing the next one cannot find.
	s := &session{api: b.api, opts: b.opts, auditID: checks.NewAuditID(), timeout: checks.DefaultTimeout}
	total := 0
	var errs []error
	for _, p := range projects {
		dep, err := b.Discover(ctx, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, run := range dep.LiveRuns() {
			left, err := copiesIn(ctx, b.api, run.ID, auditID)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if len(left) == 0 {
				continue
			}
			if bin == nil {
				if bin, err = s.binary(); err != nil {
					return total, err
				}
			}
			if err := s.removeCopies(ctx, run, bin, left); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", run.RunName(), err))
				continue
			}
			total += len(left)
		}
	}
	return total, errors.Join(errs...)
}

// differ is the part of the Docker API copiesIn needs.
type differ interface {
	ContainerDiff(ctx context.Context, containerID string) ([]container.FilesystemChange, error)
}

// copiesIn lists the copied files at the root of a container, from its
// changes against its image.
func copiesIn(ctx context.Context, api differ, id, auditID string) ([]string, error) {
	changes, err := api.ContainerDiff(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range changes {
		m := copiedName.FindStringSubmatch(c.Path)
		if m != nil && c.Kind != container.ChangeDelete && (auditID == "" || m[1] == auditID) {
			out = append(out, c.Path)
		}
	}
	return out, nil
}

// removeCopies copies the binary in under a name of its own and runs it,
// as root, to stop the left probes and remove their files and itself.
func (s *session) removeCopies(ctx context.Context, run checks.Container, bin []byte, paths []string) error {
	self := s.copiedPath("probe")
	if err := s.api.CopyToContainer(ctx, run.ID, "/", inrun.Tar(map[string]inrun.File{self[1:]: {Mode: 0o755, Data: bin}}),
		container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("copying the remover in: %w", err)
	}
	return s.execRemove(ctx, run.ID, self, append(paths, self))
}
