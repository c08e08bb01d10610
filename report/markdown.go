package report

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// RenderMarkdown writes a deployment checklist per project: one item per
// catalogue property the audit checked, ticked only when it holds, then the
// properties of the catalogue this audit did not check at all.
func RenderMarkdown(w io.Writer, r *Report, catalogue []Entry) error {
	var b bytes.Buffer
	b.WriteString("# ssebench deployment checklist\n\n")
	fmt.Fprintf(&b, "- Tool: %s %s\n", mdText(r.Tool.Name), mdText(r.Tool.Version))
	fmt.Fprintf(&b, "- Engine: %s %s (API %s)\n", mdText(engineName(r)), mdText(r.Engine.Version), mdText(r.Engine.APIVersion))
	fmt.Fprintf(&b, "- Date: %s\n", r.StartedAt.UTC().Format(time.RFC3339))
	verdict := "**" + string(r.Verdict) + "**"
	if r.Strict {
		verdict += " (strict: warnings fail)"
	}
	fmt.Fprintf(&b, "- Verdict: %s — %s\n", verdict, r.Summary)
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", mdProse(n))
		}
	}

	for _, p := range r.Projects {
		fmt.Fprintf(&b, "\n## Project %s\n\n", mdCode(p.Name))
		if len(p.AddressFamilies) > 0 {
			fmt.Fprintf(&b, "Address families probed: %s\n\n", mdText(strings.Join(p.AddressFamilies, ", ")))
		}
		byID := map[string][]Check{}
		for _, c := range p.Checks {
			byID[c.ID] = append(byID[c.ID], c)
		}
		var missing []Entry
		for _, e := range catalogue {
			checks, ok := byID[e.ID]
			if !ok {
				if r.Backend == "" || len(e.Backends) == 0 || slices.Contains(e.Backends, r.Backend) {
					missing = append(missing, e) // not what another backend's checks cover
				}
				continue
			}
			writeItem(&b, e.Title, checks)
			delete(byID, e.ID)
		}
		// Checks outside the catalogue are still listed: a failure must not vanish.
		extra := make([]string, 0, len(byID))
		for id := range byID {
			extra = append(extra, id)
		}
		slices.Sort(extra)
		for _, id := range extra {
			writeItem(&b, titleOf(id, catalogue), byID[id])
		}
		if len(p.Checks) == 0 {
			b.WriteString("No checks ran for this project.\n")
		}
		if len(missing) > 0 {
			b.WriteString("\n### Not covered by this audit\n\n")
			for _, e := range missing {
				fmt.Fprintf(&b, "- %s (%s)\n", mdText(e.Title), mdCode(e.ID))
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeItem writes one checklist item for all checks of one ID.
func writeItem(b *bytes.Buffer, title string, checks []Check) {
	checks = sortedChecks(checks)
	var bad, warned, skipped, ran []Check
	for _, c := range checks {
		switch c.Status {
		case Pass:
		case Warn:
			warned = append(warned, c)
		case Skip:
			skipped = append(skipped, c)
		default: // fail, error, inconclusive, and any unknown status
			bad = append(bad, c)
		}
		if c.Status != Skip {
			ran = append(ran, c)
		}
	}
	t := mdText(title)
	switch {
	case len(bad) > 0:
		fmt.Fprintf(b, "- [ ] %s\n", t)
	case len(ran) == 0:
		fmt.Fprintf(b, "- [ ] %s (not checked: %s)\n", t, skipReason(skipped))
		return
	case len(warned) > 0:
		fmt.Fprintf(b, "- [x] %s ⚠\n", t)
	default:
		fmt.Fprintf(b, "- [x] %s\n", t)
	}
	for _, c := range slices.Concat(bad, warned) {
		fmt.Fprintf(b, "  - **%s** %s: %s\n", c.Status, mdWhere(c), mdEvidence(c))
	}
	// A partly skipped item was only partly checked; say where.
	for _, c := range skipped {
		fmt.Fprintf(b, "  - not checked %s: %s\n", mdWhere(c), mdText(c.Message))
	}
	var fixes []string
	for _, c := range slices.Concat(bad, warned) {
		if f := c.Remedy; f != "" && !slices.Contains(fixes, f) {
			fixes = append(fixes, f)
		}
	}
	for _, f := range fixes {
		fmt.Fprintf(b, "  - Fix: %s\n", mdProse(f))
	}
}

func skipReason(skipped []Check) string {
	var reasons []string
	for _, c := range skipped {
		if m := mdText(c.Message); m != "" && !slices.Contains(reasons, m) {
			reasons = append(reasons, m)
		}
	}
	if len(reasons) == 0 {
		return "skipped"
	}
	return strings.Join(reasons, "; ")
}

func mdWhere(c Check) string {
	if c.Target == "" {
		return mdCode(c.Vantage)
	}
	return mdCode(c.Vantage) + " → " + mdCode(c.Target)
}

func mdEvidence(c Check) string {
	obs, msg := mdText(c.Observed), mdText(c.Message)
	switch {
	case obs == "":
		return msg
	case msg == "":
		return obs
	}
	return obs + " — " + msg
}

// mdEscaper neutralises the characters that make untrusted text (observed
// values, names) turn into markup, links, HTML or table cells.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`,
	`<`, `\<`, `>`, `\>`, `|`, `\|`, `~`, `\~`,
)

// mdText is untrusted text on one line, escaped.
func mdText(s string) string {
	return mdEscaper.Replace(strings.TrimSpace(clean(s, false)))
}

// mdCode is a code span that survives backticks in s (CommonMark: a longer
// fence, padded with spaces when s touches a backtick). Backslashes are
// literal inside code spans, so nothing else is escaped.
func mdCode(s string) string {
	s = clean(s, false)
	if s == "" {
		return "` `"
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdProse is for our own prose (remedies, notes), written with Markdown code
// spans: it keeps them, escapes the rest, and flattens it to one line.
func mdProse(s string) string {
	s = strings.TrimSpace(clean(s, false))
	if strings.Count(s, "`")%2 != 0 {
		return mdText(s) // unbalanced: treat as plain text
	}
	parts := strings.Split(s, "`")
	for i := range parts {
		if i%2 == 0 {
			parts[i] = mdEscaper.Replace(parts[i])
		}
	}
	return strings.Join(parts, "`")
}
