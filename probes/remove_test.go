package probes

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRemoveFiles(t *testing.T) {
	const prefix = ".sba-"
	type setup struct {
		files, dirs []string
		links       map[string]string // name -> target (relative to the dir)
	}
	tests := []struct {
		name   string
		setup  setup
		paths  []string // relative to the dir; "" stays ""
		prefix string
		err    string   // substring; "" means no error
		gone   []string // removed
		kept   []string // still there
	}{
		{"probe and plan", setup{files: []string{".sba-probe-1", ".sba-plan-1.json", "other"}},
			[]string{".sba-probe-1", ".sba-plan-1.json"}, prefix, "",
			[]string{".sba-probe-1", ".sba-plan-1.json"}, []string{"other"}},
		{"missing is fine", setup{files: []string{".sba-probe-1"}},
			[]string{".sba-gone", ".sba-probe-1"}, prefix, "", []string{".sba-probe-1"}, nil},
		{"no paths", setup{}, nil, prefix, "", nil, nil},
		{"a foreign name refuses all", setup{files: []string{".sba-probe-1", "passwd"}},
			[]string{".sba-probe-1", "passwd"}, prefix, `refusing`, nil, []string{".sba-probe-1", "passwd"}},
		{"prefix only in a directory name", setup{dirs: []string{".sba-dir"}, files: []string{".sba-dir/victim"}},
			[]string{".sba-dir/victim"}, prefix, "refusing", nil, []string{".sba-dir/victim"}},
		{"trailing slash", setup{dirs: []string{".sba-dir"}},
			[]string{".sba-dir/"}, prefix, "refusing", nil, []string{".sba-dir"}},
		{"dot-dot is literal", setup{files: []string{"victim"}},
			[]string{".sba-x/.."}, prefix, "refusing", nil, []string{"victim"}},
		{"a directory is not unlinked", setup{dirs: []string{".sba-dir"}},
			[]string{".sba-dir"}, prefix, "remove", nil, []string{".sba-dir"}},
		{"a symlink goes, its target stays", setup{files: []string{"target"}, links: map[string]string{".sba-link": "target"}},
			[]string{".sba-link"}, prefix, "", []string{".sba-link"}, []string{"target"}},
		{"a link whose target has the prefix is refused", setup{files: []string{".sba-real"}, links: map[string]string{"innocent": ".sba-real"}},
			[]string{"innocent"}, prefix, "refusing", nil, []string{"innocent", ".sba-real"}},
		{"one failure does not stop the others", setup{dirs: []string{".sba-dir"}, files: []string{".sba-f"}},
			[]string{".sba-dir", ".sba-f"}, prefix, "is a directory", []string{".sba-f"}, []string{".sba-dir"}},
		{"empty path", setup{}, []string{""}, prefix, "refusing", nil, nil},
		{"empty prefix", setup{files: []string{"x"}}, []string{"x"}, "", "empty prefix", nil, []string{"x"}},
		{"prefix is case-sensitive", setup{files: []string{".SBA-x"}}, []string{".SBA-x"}, prefix, "refusing", nil, []string{".SBA-x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range tt.setup.dirs {
				require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
			}
			for _, f := range tt.setup.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644))
			}
			for name, target := range tt.setup.links {
				require.NoError(t, os.Symlink(filepath.Join(dir, target), filepath.Join(dir, name)))
			}
			var paths []string
			for _, p := range tt.paths {
				if p != "" {
					p = dir + "/" + p
				}
				paths = append(paths, p)
			}
			err := RemoveFiles(paths, tt.prefix)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
			} else {
				require.NoError(t, err)
			}
			for _, p := range tt.gone {
				_, err := os.Lstat(filepath.Join(dir, p))
				assert.True(t, os.IsNotExist(err), "%s removed", p)
			}
			for _, p := range tt.kept {
				_, err := os.Lstat(filepath.Join(dir, p))
				assert.NoError(t, err, "%s kept", p)
			}
		})
	}
}
