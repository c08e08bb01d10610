// Package schema publishes a JSON Schema (draft 2020-12) for each JSON
// document the tool writes, and validates documents against them. The
// schemas are open: they declare the contract's fields without forbidding
// others, because the contract lets fields be added.
package schema

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Base is the URL every schema's $id starts with; refs between the schemas
// are relative to it.
const Base = "https://github.com/ssebench-audit/ssebench-audit/schema/"

const suffix = ".schema.json"

//go:embed *.schema.json
var files embed.FS

// names is derived from the embedded files so a new schema file is
// published without a second list to keep in step.
var names = func() []string {
	paths, err := fs.Glob(files, "*"+suffix)
	if err != nil {
		panic(err) // the pattern is a constant
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, strings.TrimSuffix(p, suffix))
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
	return files.ReadFile(name + suffix)
}

type compiled struct {
	once sync.Once
	sch  *jsonschema.Schema
	err  error
}

// cache holds one compilation per schema: Validate is called per document,
// and a compiler is not safe for concurrent use, so each name gets its own.
var cache = func() map[string]*compiled {
	m := make(map[string]*compiled, len(names))
	for _, n := range names {
		m[n] = &compiled{}
	}
	return m
}()

// noLoader keeps compilation to the embedded schemas: a mistyped $ref is an
// error here rather than a file read or a fetch.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not one of the embedded schemas", url)
}

func compile(name string) (*jsonschema.Schema, error) {
	if _, err := Get(name); err != nil {
		return nil, err
	}
	c := cache[name]
	c.once.Do(func() {
		comp := jsonschema.NewCompiler()
		comp.UseLoader(noLoader{})
		// Timestamps are part of the contract (RFC 3339), so check them.
		comp.AssertFormat()
		for _, n := range names {
			text, _ := files.ReadFile(n + suffix)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
			if err != nil {
				c.err = fmt.Errorf("schema %s: %w", n, err)
				return
			}
			if err := comp.AddResource(Base+n+suffix, doc); err != nil {
				c.err = fmt.Errorf("schema %s: %w", n, err)
				return
			}
		}
		c.sch, c.err = comp.Compile(Base + name + suffix)
	})
	return c.sch, c.err
}

// maxCauses bounds the message: the first few causes locate the problem,
// the rest are usually its echoes in other anyOf branches.
const maxCauses = 3

// Validate checks a JSON document against the named schema. The error is
// one line naming the JSON Pointer of each problem.
func Validate(name string, doc []byte) error {
	sch, err := compile(name)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not a JSON document: %w", err)
	}
	err = sch.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	return fmt.Errorf("does not match the %s schema: %s", name, oneLine(ve))
}

func oneLine(ve *jsonschema.ValidationError) string {
	var leaves []*jsonschema.ValidationError
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	// The deepest location is the most specific: for a report-or-null
	// field, "want null" is the shallow echo of the real problem.
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return len(b.InstanceLocation) - len(a.InstanceLocation)
	})
	var parts []string
	for i, l := range leaves {
		if i == maxCauses {
			parts = append(parts, fmt.Sprintf("and %d more", len(leaves)-maxCauses))
			break
		}
		msg := strings.Join(strings.Fields(l.Error()), " ")
		parts = append(parts, strings.Replace(msg, "at '':", "at top level:", 1))
	}
	return strings.Join(parts, "; ")
}
