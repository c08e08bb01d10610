package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Renderer writes a report in one output format.
type Renderer func(w io.Writer, r *Report, o Options) error

// Options are what a renderer may need beyond the report.
type Options struct {
	// Catalogue lists every check in catalogue order: the checklist names
	// properties by title and lists those an audit did not cover, and a
	// row without a remedy of its own gets its check's.
	Catalogue []Entry
}

// Entry describes one check of the catalogue.
type Entry struct {
	ID, Title, From, Remedy string
	Backends                []string // the backends it is made on
}

// engineName names what ran the deployment ("docker", "kubernetes");
// reports from before the backend was named were all Docker's.
func engineName(r *Report) string {
	if r.Backend == "" {
		return "docker"
	}
	return r.Backend
}

// formats is the registry behind --format; add a format here and nowhere else.
var formats = map[string]Renderer{
	"json":     func(w io.Writer, r *Report, _ Options) error { return RenderJSON(w, r) },
	"junit":    func(w io.Writer, r *Report, _ Options) error { return RenderJUnit(w, r) },
	"markdown": func(w io.Writer, r *Report, o Options) error { return RenderMarkdown(w, r, o.Catalogue) },
	"table":    func(w io.Writer, r *Report, _ Options) error { return RenderTable(w, r) },
}

// Render writes r to w in the named format.
func Render(w io.Writer, format string, r *Report, o Options) error {
	f, ok := formats[format]
	if !ok {
		return fmt.Errorf("unknown report format %q (known: %s)", format, strings.Join(Formats(), ", "))
	}
	if r == nil {
		return fmt.Errorf("report: nil report")
	}
	return f(w, withRemedies(r, o.Catalogue), o)
}

// withRemedies gives every row that needs attention and has no remedy its
// check's (a report read back from an older version may lack them); the
// caller's report is left alone.
func withRemedies(r *Report, cat []Entry) *Report {
	out := *r
	out.Projects = slices.Clone(r.Projects)
	for i, p := range out.Projects {
		p.Checks = slices.Clone(p.Checks)
		for j, c := range p.Checks {
			if c.Remedy != "" || !needsAttention(c.Status) {
				continue
			}
			for _, e := range cat {
				if e.ID == c.ID {
					p.Checks[j].Remedy = e.Remedy
				}
			}
		}
		out.Projects[i] = p
	}
	return &out
}

// Formats lists the known format names, sorted, for flag help and errors.
func Formats() []string {
	names := make([]string, 0, len(formats))
	for name := range formats {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
