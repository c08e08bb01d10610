package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sortedChecks returns a copy ordered most urgent first; the input (and so
// the JSON order) is left alone.
func sortedChecks(checks []Check) []Check {
	out := slices.Clone(checks)
	slices.SortStableFunc(out, func(a, b Check) int {
		return cmp.Or(
			cmp.Compare(a.Status.Rank(), b.Status.Rank()),
			cmp.Compare(a.ID, b.ID),
			cmp.Compare(a.Vantage, b.Vantage),
			cmp.Compare(a.Target, b.Target),
		)
	})
	return out
}

// titleOf falls back to the ID so an uncatalogued check is still listed.
func titleOf(id string, cat []Entry) string {
	for _, e := range cat {
		if e.ID == id {
			return e.Title
		}
	}
	return id
}

// needsAttention is true for the statuses that get a detail block; an
// unknown status counts, so it cannot hide.
func needsAttention(s Status) bool {
	return s != Pass && s != Skip
}

// countChecks tallies statuses the same way Finalize does, for one project.
func countChecks(checks []Check) Summary {
	var s Summary
	for _, c := range checks {
		switch c.Status {
		case Pass:
			s.Pass++
		case Fail:
			s.Fail++
		case Warn:
			s.Warn++
		case Inconclusive:
			s.Inconclusive++
		case Error:
			s.Error++
		case Skip:
			s.Skip++
		}
	}
	return s
}

// projectVerdict applies the audit's verdict rules to one project.
func projectVerdict(p Project, strict bool) Verdict {
	r := Report{Projects: []Project{p}, Strict: strict}
	r.Finalize(false)
	return r.Verdict
}

// String lists every count, zeros included, so logs can be grepped.
func (s Summary) String() string {
	return fmt.Sprintf("%d pass, %d fail, %d warn, %d inconclusive, %d error, %d skip",
		s.Pass, s.Fail, s.Warn, s.Inconclusive, s.Error, s.Skip)
}

// Total is the number of checks counted.
func (s Summary) Total() int {
	return s.Pass + s.Fail + s.Warn + s.Inconclusive + s.Error + s.Skip
}

// clean makes untrusted text (observed values come from agent-controlled
// containers) safe for a terminal or log: control and format characters
// (ANSI escapes, bidi overrides) are shown escaped instead of acting.
// Newlines and tabs survive only when keepLines is set.
func clean(s string, keepLines bool) string {
	if !strings.ContainsFunc(s, func(r rune) bool {
		return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
	}) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
			} else {
				b.WriteRune(r)
			}
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// truncate cuts s to max runes, marking the cut with an ellipsis.
func truncate(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// where names the vantage and target of a check for humans.
func where(c Check) string {
	if c.Target == "" {
		return c.Vantage
	}
	return c.Vantage + " → " + c.Target
}
