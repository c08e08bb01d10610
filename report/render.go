package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Renderer writes a report in one output format.
type Renderer func(w io.Writer, r *Report) error

// formats is the registry behind --format; add a format here and nowhere else.
var formats = map[string]Renderer{
	"json":     RenderJSON,
	"junit":    RenderJUnit,
	"markdown": RenderMarkdown,
	"table":    RenderTable,
}

// Render writes r to w in the named format.
func Render(w io.Writer, format string, r *Report) error {
	f, ok := formats[format]
	if !ok {
		return fmt.Errorf("unknown report format %q (known: %s)", format, strings.Join(Formats(), ", "))
	}
	if r == nil {
		return fmt.Errorf("report: nil report")
	}
	return f(w, r)
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
