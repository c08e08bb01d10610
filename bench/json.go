package bench

import (
	"encoding/json"
	"io"
)

// RenderJSON writes the whole benchmark, every run with its audits.
func RenderJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
