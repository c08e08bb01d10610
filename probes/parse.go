package probes

import (
	"errors"
	"fmt"
	"io"
)

// knownOutcomes are the outcomes a probe may report.
var knownOutcomes = map[Outcome]bool{
	Connected: true, Refused: true, Unreachable: true, Timeout: true,
	Address: true, NoData: true, NXDomain: true, ServFail: true, DNSRefused: true, OtherRcode: true,
	Response: true, Closed: true, Error: true,
	Denied: true, NotFound: true, Exists: true,
	Listed: true,
}

// ParseReport reads a probe's stdout (at most max bytes) as one Report: a
// strict decode, no trailing data, known outcomes and non-empty IDs only.
// The host must not trust this output: the probe may share a network
// namespace with an agent.
func ParseReport(r io.Reader, max int64) (Report, error) {
	var rep Report
	data, err := ReadAtMost(r, max)
	if err != nil {
		return rep, fmt.Errorf("report: %w", err)
	}
	if err := decodeStrict(data, &rep); err != nil {
		return Report{}, fmt.Errorf("report: %w", err)
	}
	for i, res := range rep.Results {
		if res.ID == "" {
			return Report{}, fmt.Errorf("report: result %d has no id", i)
		}
		if !knownOutcomes[res.Outcome] {
			return Report{}, fmt.Errorf("report: result %q: unknown outcome %q", res.ID, res.Outcome)
		}
		if err := checkBounds(res); err != nil {
			return Report{}, fmt.Errorf("report: result %q: %w", res.ID, err)
		}
	}
	return rep, nil
}

// checkBounds enforces the shapes a probe produces: at most MaxJSONKeys
// json keys of at most MaxJSONKeyBytes each, and a file's parent without
// a parent of its own.
func checkBounds(res Result) error {
	if h := res.HTTP; h != nil {
		if len(h.JSONKeys) > MaxJSONKeys {
			return fmt.Errorf("%d json keys, more than %d", len(h.JSONKeys), MaxJSONKeys)
		}
		for _, k := range h.JSONKeys {
			if len(k) > MaxJSONKeyBytes {
				return fmt.Errorf("a json key of %d bytes, more than %d", len(k), MaxJSONKeyBytes)
			}
		}
	}
	if f := res.File; f != nil && f.Dir != nil && f.Dir.Dir != nil {
		return errors.New("file: nested dir")
	}
	if len(res.Listeners) > MaxListeners {
		return fmt.Errorf("%d listeners, more than %d", len(res.Listeners), MaxListeners)
	}
	for _, l := range res.Listeners {
		if len(l.Process) > 4*maxProcessString || len(l.Address) > 64 || l.Port < 0 || l.Port > 65535 {
			return fmt.Errorf("a listener out of bounds")
		}
	}
	return nil
}
