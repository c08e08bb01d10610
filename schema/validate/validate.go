// Package validate checks the tool's JSON documents against the schemas
// package schema publishes, with a kept validator library. The tests use
// it; the tool does not carry it (it would grow the binary copied into
// every run, and its start-up memory).
package validate

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ssebench-audit/ssebench-audit/schema"
)

type compiled struct {
	once sync.Once
	sch  *jsonschema.Schema
	err  error
}

// cache holds one compilation per schema: Validate is called per document,
// and a compiler is not safe for concurrent use, so each name gets its own.
var cache = func() map[string]*compiled {
	m := make(map[string]*compiled, len(schema.Names()))
	for _, n := range schema.Names() {
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
	if _, err := schema.Get(name); err != nil {
		return nil, err
	}
	c := cache[name]
	c.once.Do(func() {
		comp := jsonschema.NewCompiler()
		comp.UseLoader(noLoader{})
		// Timestamps are part of the contract (RFC 3339), so check them.
		comp.AssertFormat()
		for _, n := range schema.Names() {
			text, _ := schema.Get(n)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
			if err != nil {
				c.err = fmt.Errorf("schema %s: %w", n, err)
				return
			}
			if err := comp.AddResource(schema.Base+n+schema.Suffix, doc); err != nil {
				c.err = fmt.Errorf("schema %s: %w", n, err)
				return
			}
		}
		c.sch, c.err = comp.Compile(schema.Base + name + schema.Suffix)
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
