// Package schema publishes a JSON Schema (draft 2020-12) for each JSON
// document the tool writes (package validate checks documents against
// them, for the tests: the tool itself carries no validator). The schemas
// are open: they declare the contract's fields without forbidding others,
// because the contract lets fields be added.
package schema

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Base is the URL every schema's $id starts with; refs between the schemas
// are relative to it.
const Base = "https://github.com/ssebench-audit/ssebench-audit/schema/"

// Suffix ends every schema's file name (and $id).
const Suffix = ".schema.json"

//go:embed *.schema.json
var files embed.FS

// names is derived from the embedded files so a new schema file is
// published without a second list to keep in step.
var names = func() []string {
	paths, err := fs.Glob(files, "*"+Suffix)
	if err != nil {
		panic(err) // the pattern is a constant
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, strings.TrimSuffix(p, Suffix))
	}
	slices.Sort(out)
	return out
}()

// Names lists the published schemas, sorted.
func Names() []string { return slices.Clone(names) }

// Get returns the text of the named schema.
func Get(name string) ([]byte, error) {
	if !slices.Contains(names, name) {
		return nil, fmt.Errorf("unknown schema %q (known: %s)", name, strings.Join(names, ", "))
	}
	return files.ReadFile(name + Suffix)
}
