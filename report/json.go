package report

import (
	"encoding/json"
	"io"
)

// RenderJSON writes the contract JSON of design.md, indented, checks in the
// order the audit produced them.
func RenderJSON(w io.Writer, r *Report) error {
	out := *r
	// The contract promises arrays, never null, to consumers that index them;
	// the copy leaves the caller's report alone.
	projects := make([]Project, len(r.Projects))
	for i, p := range r.Projects {
		if p.Checks == nil {
			p.Checks = []Check{}
		}
		projects[i] = p
	}
	out.Projects = projects

	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Evidence such as "<html>" stays readable; the output is not embedded in HTML.
	enc.SetEscapeHTML(false)
	return enc.Encode(&out)
}
