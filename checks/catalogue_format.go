package checks

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// CatalogueFormats are the formats the catalogue is written in.
var CatalogueFormats = []string{"json", "markdown", "table"}

// catalogueEntry is one check as `ssebench-audit checks --format json`
// writes it.
type catalogueEntry struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	From     From     `json:"from"`
	How      string   `json:"how"`
	Control  string   `json:"control,omitempty"`
	PerRun   bool     `json:"per_run,omitempty"`
	Remedy   string   `json:"remedy"`
	Backends []string `json:"backends"`
}

// how says how a check is made, in the catalogue's words.
func (c *Check) how() string {
	switch {
	case c.Host != nil:
		return "from the backend's API"
	case c.Plan != nil && c.Inside != nil:
		return c.howInside() + "; on a cluster, by probes from where a run stands"
	case c.Plan != nil:
		return "by probes where an agent stands"
	case c.Inside != nil:
		return c.howInside()
	case c.ID == RunEgressRecorded:
		return "by `ssebench-audit bench`, once a run has ended"
	}
	return "by the audit, about itself"
}

func (c *Check) howInside() string {
	if c.Reach != nil {
		return "from inside each live run, as root; what it finds beyond loopback is probed from the fresh run and from the runs that sample this one"
	}
	return "from inside each live run, as root and as the agent's users"
}

// WriteCatalogue writes every check in the named format: what it proves,
// from where, and the fix. docs/checks.md is its Markdown.
func WriteCatalogue(w io.Writer, format string) error {
	switch format {
	case "json":
		var out []catalogueEntry
		for _, c := range registry {
			out = append(out, catalogueEntry{ID: c.ID, Title: c.Title, From: c.From, How: c.how(), Control: c.Control,
				PerRun: c.PerRun, Remedy: c.Remedy, Backends: c.backends()})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	case "markdown":
		return writeCatalogueMarkdown(w)
	case "table":
		// A block per check, not a grid: titles and fixes are sentences, and
		// a grid of them wraps into columns of word fragments.
		var b strings.Builder
		for i, c := range registry {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%s  (%s; %s)\n  passes when: %s\n", c.ID, c.From, strings.Join(c.backends(), ", "), c.Title)
			if c.Control != "" {
				fmt.Fprintf(&b, "  control:     %s\n", c.Control)
			}
			fmt.Fprintf(&b, "  fix:         %s\n", c.Remedy)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	return fmt.Errorf("unknown --format %q (known: %s)", format, strings.Join(CatalogueFormats, ", "))
}

func writeCatalogueMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Checks\n\n")
	b.WriteString("Every check `ssebench-audit` makes, in catalogue order. The IDs are stable: CI configurations,\n" +
		"`--only`, `--skip` and checklists refer to them. This file is written by\n" +
		"`ssebench-audit checks --format markdown` from the catalogue (`checks/registry.go`, one file per\n" +
		"check beside it); a test fails when it is stale, `make docs` writes it again.\n\n")
	b.WriteString("| ID | From | Backends | Passes when |\n|---|---|---|---|\n")
	for _, c := range registry {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s |\n", c.ID, anchor(c.ID), c.From, strings.Join(c.backends(), ", "), mdCell(c.Title))
	}
	b.WriteString("\nVantage points: **host** (the engine's API), **fresh run** (a probe placed as `ssebench run\n" +
		"--egress restricted` places a run), **live run** (each live run's own network namespace),\n" +
		"**in-container** (inside each live run, as root and as the agent's users), **cluster API** (a\n" +
		"Kubernetes API server: the run pods, the NetworkPolicies that select them, the authorizer).\n")
	for _, c := range registry {
		fmt.Fprintf(&b, "\n## `%s`\n\n", c.ID)
		fmt.Fprintf(&b, "%s.\n\n", strings.TrimSuffix(c.Title, "."))
		fmt.Fprintf(&b, "- From: %s, on %s; made %s", c.From, strings.Join(c.backends(), " and "), c.how())
		if c.PerRun {
			b.WriteString(" (also in an audit of one run)")
		}
		b.WriteString(".\n")
		if c.Control != "" {
			fmt.Fprintf(&b, "- Positive control: [`%s`](#%s); when it fails, this check's passes are inconclusive.\n", c.Control, anchor(c.Control))
		}
		if controls := controlled(c.ID); len(controls) > 0 {
			fmt.Fprintf(&b, "- Controls: %s.\n", strings.Join(controls, ", "))
		}
		fmt.Fprintf(&b, "- Fix: %s\n", c.Remedy)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// controlled lists, as Markdown links, the checks id is the control of.
func controlled(id string) []string {
	var out []string
	for _, c := range registry {
		if c.Control == id {
			out = append(out, fmt.Sprintf("[`%s`](#%s)", c.ID, anchor(c.ID)))
		}
	}
	return slices.Compact(out)
}

// anchor is the heading anchor GitHub makes of "`id`".
func anchor(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' {
			return -1
		}
		return r
	}, id)
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "<", `\<`, ">", `\>`).Replace(s)
}
