package validate

import (
	"bytes"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Undescribed lists the paths (e.g. "projects[].checks[].foo") of object
// keys in doc that the named schema does not declare under properties. The
// schemas stay open to additions; this lets tests catch a field the code
// writes but the schema does not document. An unknown schema or a document
// that is not JSON yields one entry saying so, so that a caller asserting
// an empty result does not pass by accident.
func Undescribed(name string, doc []byte) []string {
	sch, err := compile(name)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return []string{"error: not a JSON document: " + err.Error()}
	}
	var out []string
	undescribed(v, []*jsonschema.Schema{sch}, "", &out)
	slices.Sort(out)
	return slices.Compact(out) // every element of an array repeats its items' paths
}

func undescribed(v any, schs []*jsonschema.Schema, path string, out *[]string) {
	schs = applicable(schs)
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			next := propertySchemas(schs, k)
			if len(next) == 0 {
				*out = append(*out, p)
				continue
			}
			undescribed(child, next, p, out)
		}
	case []any:
		var next []*jsonschema.Schema
		for _, s := range schs {
			if s.Items2020 != nil {
				next = append(next, s.Items2020)
			}
			if it, ok := s.Items.(*jsonschema.Schema); ok {
				next = append(next, it)
			}
		}
		for _, e := range v {
			undescribed(e, next, path+"[]", out)
		}
	}
}

// propertySchemas: the subschemas that declare key k; a map-like object
// (additionalProperties or patternProperties as a schema) declares its keys
// that way.
func propertySchemas(schs []*jsonschema.Schema, k string) []*jsonschema.Schema {
	var next []*jsonschema.Schema
	for _, s := range schs {
		if p, ok := s.Properties[k]; ok {
			next = append(next, p)
		}
		for re, p := range s.PatternProperties {
			if re.MatchString(k) {
				next = append(next, p)
			}
		}
		if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			next = append(next, ap)
		}
	}
	return next
}

// applicable expands refs and combinators: an object-or-null field is an
// anyOf whose object branch declares the properties.
func applicable(schs []*jsonschema.Schema) []*jsonschema.Schema {
	seen := map[*jsonschema.Schema]bool{}
	var out []*jsonschema.Schema
	var add func(*jsonschema.Schema)
	add = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
		add(s.Ref)
		for _, group := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
			for _, g := range group {
				add(g)
			}
		}
	}
	for _, s := range schs {
		add(s)
	}
	return out
}
