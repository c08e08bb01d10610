package report

import (
	"bytes"
	"encoding/json"
	"io"
)

// RenderJSON writes the JSON report (the README's contract, and `schema
// report`), indented, checks in the order the audit produced them.
func RenderJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Evidence such as "<html>" stays readable; the output is not embedded in HTML.
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// MarshalJSON writes a report's projects as an array, never null, wherever
// a report is written (the audit, the gate's attestation, bench's files):
// the contract promises arrays to consumers that index them.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report // without this method
	if r.Projects == nil {
		r.Projects = []Project{}
	}
	return marshalPlain(plain(r))
}

// MarshalJSON writes a project's checks as an array, never null.
func (p Project) MarshalJSON() ([]byte, error) {
	type plain Project
	if p.Checks == nil {
		p.Checks = []Check{}
	}
	return marshalPlain(plain(p))
}

// marshalPlain keeps evidence such as "<html>" readable: the output is not
// embedded in HTML.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
