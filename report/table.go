package report

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// cellMax bounds a table cell; the detail blocks carry the full text.
const cellMax = 60

// RenderTable writes the human report: per project a heading, a table with
// failures first and a detail block per row that needs attention; then the
// notes and, last, the verdict line (the line a CI log tail shows).
func RenderTable(w io.Writer, r *Report) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s · %s %s (API %s) · started %s · took %s\n",
		clean(r.Tool.Name, false), clean(r.Tool.Version, false), clean(engineName(r), false),
		clean(r.Engine.Version, false), clean(r.Engine.APIVersion, false),
		r.StartedAt.UTC().Format(time.RFC3339),
		(time.Duration(r.DurationMS) * time.Millisecond).String())
	if len(r.Projects) == 0 {
		b.WriteString("\nno projects audited\n")
	}
	for _, p := range r.Projects {
		fmt.Fprintf(&b, "\nproject %s: %s — %s\n", clean(p.Name, false),
			projectVerdict(p, r.Strict), countChecks(p.Checks))
		if len(p.AddressFamilies) > 0 {
			fmt.Fprintf(&b, "address families probed: %s\n", clean(strings.Join(p.AddressFamilies, ", "), false))
		}
		if len(p.Checks) == 0 {
			b.WriteString("no checks\n")
			continue
		}
		checks := sortedChecks(p.Checks)
		if err := writeTable(&b, checks); err != nil {
			return fmt.Errorf("table for project %s: %w", p.Name, err)
		}
		writeDaemonsByRun(&b, checks)
		for _, c := range checks {
			if needsAttention(c.Status) {
				b.WriteByte('\n')
				writeBlock(&b, c)
			}
		}
	}
	b.WriteByte('\n')
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", indentLines(clean(n, true), "      "))
	}
	verdict := string(r.Verdict)
	if r.Strict {
		verdict += " (strict: warnings fail)"
	}
	fmt.Fprintf(&b, "verdict: %s — %s\n", verdict, r.Summary)
	_, err := w.Write(b.Bytes())
	return err
}

func writeTable(w io.Writer, checks []Check) error {
	t := tablewriter.NewTable(w,
		// ASCII borders: the output often ends up in CI logs and files.
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		// Cells are truncated by us; wrapping would hide that.
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
	)
	t.Header("STATUS", "CHECK", "VANTAGE", "TARGET", "OBSERVED")
	for _, c := range checks {
		err := t.Append(
			strings.ToUpper(cell(string(c.Status))),
			cell(c.ID), cell(c.Vantage), cell(c.Target), cell(c.Observed))
		if err != nil {
			return err
		}
	}
	return t.Render()
}

// writeDaemonsByRun groups the daemon checks by the run whose daemon was
// asked: one line per run and check, with the vantages it was seen from.
func writeDaemonsByRun(b *bytes.Buffer, checks []Check) {
	type key struct{ run, id string }
	var runs []string
	byRun := map[string]bool{}
	seen := map[key][]string{}
	var order []key
	for _, c := range checks {
		if !strings.HasPrefix(c.ID, "daemon.") {
			continue
		}
		if !byRun[c.Target] {
			byRun[c.Target] = true
			runs = append(runs, c.Target)
		}
		k := key{c.Target, c.ID}
		if _, ok := seen[k]; !ok {
			order = append(order, k)
		}
		from := c.Vantage
		if len(c.Vantages) > 0 {
			from = strings.Join(c.Vantages, ", ")
		}
		seen[k] = append(seen[k], string(c.Status)+" from "+from)
	}
	if len(runs) == 0 {
		return
	}
	sort.Strings(runs)
	b.WriteString("\ndaemons by run:\n")
	for _, run := range runs {
		fmt.Fprintf(b, "  %s\n", clean(run, false))
		for _, k := range order {
			if k.run == run {
				fmt.Fprintf(b, "    %-24s %s\n", clean(k.id, false), clean(strings.Join(seen[k], ", "), false))
			}
		}
	}
}

func cell(s string) string {
	return truncate(clean(s, false), cellMax)
}

// writeBlock spells out one check needing attention, untruncated.
func writeBlock(b *bytes.Buffer, c Check) {
	fmt.Fprintf(b, "✗ %s (%s) — %s\n", clean(c.ID, false), clean(where(c), false), c.Status)
	line := func(label, v string) {
		if v == "" {
			return
		}
		pad := strings.Repeat(" ", 2+len(label))
		fmt.Fprintf(b, "  %s%s\n", label, indentLines(clean(v, true), pad))
	}
	line("expected: ", c.Expected)
	line("observed: ", c.Observed)
	line("", c.Message)
	line("fix: ", c.Remedy)
}

// indentLines keeps continuation lines of a multi-line value under its first.
func indentLines(s, pad string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
}
