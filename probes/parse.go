package probes

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// knownOutcomes are the outcomes a probe may report.
var knownOutcomes = map[Outcome]bool{
	Connected: true, Refused: true, Unreachable: true, Timeout: true,
	Address: true, NoData: true, NXDomain: true, ServFail: true, DNSRefused: true, OtherRcode: true,
	Response: true, Closed: true, Error: true,
}

// ParseReport reads a probe's stdout (at most max bytes) as one Report: a
// strict decode, no trailing data, known outcomes and non-empty IDs only.
// The host must not trust this output: the probe may share a network
// namespace with an agent.
func ParseReport(r io.Reader, max int64) (Report, error) {
	var rep Report
	if max <= 0 {
		return rep, errors.New("report: max must be positive")
	}
	limit := max
	if limit < math.MaxInt64 {
		limit++ // one byte more tells "too long" from "exactly max"
	}
	data, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return rep, fmt.Errorf("report: %w", err)
	}
	if int64(len(data)) > max {
		return rep, fmt.Errorf("report: more than %d bytes", max)
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
	}
	return rep, nil
}
