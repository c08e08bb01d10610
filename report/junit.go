package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// JUnit XML as CI systems (Jenkins, GitLab, GitHub test reporters) read it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitText struct {
	Text string `xml:",cdata"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"` // CDATA keeps the lines readable in the raw file
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// RenderJUnit writes one testsuite per project and one testcase per check
// and target. Inconclusive is an error, not a failure: nothing was proven
// broken, but nothing was proven safe either. A warning passes unless the
// report is strict.
func RenderJUnit(w io.Writer, r *Report) error {
	doc := junitSuites{
		Name: clean(r.Tool.Name, false),
		Time: seconds(r.DurationMS),
	}
	for _, p := range r.Projects {
		s := junitSuite{
			Name:       clean(p.Name, false),
			Timestamp:  r.StartedAt.UTC().Format("2006-01-02T15:04:05"),
			Properties: junitProperties(r),
		}
		var ms int64
		for _, c := range p.Checks {
			tc := junitCase{
				Classname: clean(p.Name+"."+c.ID, false),
				Name:      clean(fmt.Sprintf("%s [%s]", c.ID, where(c)), false),
				Time:      seconds(c.DurationMS),
			}
			msg := c.Message
			if msg == "" {
				msg = c.Observed
			}
			msg = clean(msg, false)
			switch c.Status {
			case Fail:
				tc.Failure = &junitProblem{Message: msg, Type: "fail", Text: evidence(c)}
				s.Failures++
			case Error:
				tc.Error = &junitProblem{Message: msg, Type: "error", Text: evidence(c)}
				s.Errors++
			case Inconclusive:
				tc.Error = &junitProblem{Message: msg, Type: "inconclusive", Text: evidence(c)}
				s.Errors++
			case Skip:
				tc.Skipped = &junitSkipped{Message: msg}
				s.Skipped++
			case Warn:
				if r.Strict {
					tc.Failure = &junitProblem{Message: msg, Type: "warn", Text: evidence(c)}
					s.Failures++
				} else {
					tc.SystemOut = &junitText{"warning: " + msg + "\n" + evidence(c)}
				}
			case Pass:
			default:
				// An unknown status must not pass silently.
				tc.Error = &junitProblem{Message: "unknown status " + strconv.Quote(string(c.Status)), Type: "error", Text: evidence(c)}
				s.Errors++
			}
			s.Cases = append(s.Cases, tc)
			ms += c.DurationMS
		}
		s.Tests = len(p.Checks)
		s.Time = seconds(ms)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}

	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func junitProperties(r *Report) []junitProperty {
	props := []junitProperty{
		{"tool.version", r.Tool.Version},
		{"backend", engineName(r)},
		{"engine.version", r.Engine.Version},
		{"engine.api_version", r.Engine.APIVersion},
		{"verdict", string(r.Verdict)},
		{"strict", strconv.FormatBool(r.Strict)},
	}
	if r.AuditID != "" {
		props = append(props, junitProperty{"audit_id", r.AuditID})
	}
	for _, n := range r.Notes {
		props = append(props, junitProperty{"note", n})
	}
	for i := range props {
		props[i].Value = clean(props[i].Value, false)
	}
	return props
}

// evidence is the body of a failure: what was expected, seen, and to do.
// Control characters are escaped: XML 1.0 cannot carry them, not even in
// CDATA, and the observed text comes from agent-controlled containers.
func evidence(c Check) string {
	var b strings.Builder
	for _, kv := range [][2]string{
		{"expected", c.Expected},
		{"observed", c.Observed},
		{"message", c.Message},
		{"fix", c.Remedy},
	} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], clean(kv[1], true))
		}
	}
	return b.String()
}

func seconds(ms int64) string {
	return strconv.FormatFloat((time.Duration(ms) * time.Millisecond).Seconds(), 'f', 3, 64)
}
