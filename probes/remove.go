package probes

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// CopiedPrefix starts the name of everything an audit copies into a run:
// the host names its copies with it, and the probe removes or stops nothing
// else.
const CopiedPrefix = ".sba-"

// RemoveFiles unlinks each path whose last element, taken from the literal
// path (no cleaning, no symbolic link followed), starts with prefix; it is
// how the host deletes the probe binary and plan it copied into a run
// container (prefix CopiedPrefix). Every path is checked before any is removed:
// one refused path (an empty prefix or path, a name without the prefix, a
// trailing slash) removes nothing. A missing file is not an error; a
// directory is refused by unlink(2) itself. A symbolic link is removed,
// never its target. The errors of all paths are joined.
func RemoveFiles(paths []string, prefix string) error {
	if err := checkCopied(paths, prefix); err != nil {
		return err
	}
	var errs []error
	for _, p := range paths {
		if err := syscall.Unlink(p); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, &os.PathError{Op: "remove", Path: p, Err: err})
		}
	}
	return errors.Join(errs...)
}

// checkCopied refuses paths that cannot be what the audit copied: a last
// element, taken literally, that does not start with prefix.
func checkCopied(paths []string, prefix string) error {
	if prefix == "" {
		return errors.New("remove: empty prefix")
	}
	for _, p := range paths {
		base := p[strings.LastIndexByte(p, '/')+1:]
		if !strings.HasPrefix(base, prefix) {
			return fmt.Errorf("remove: refusing %q: its name does not start with %q", p, prefix)
		}
	}
	return nil
}
