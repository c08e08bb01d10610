package probes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Version is reported in every Report; the build sets it (-ldflags -X).
var Version = "dev"

const (
	// MaxPlanBytes bounds the plan Execute accepts.
	MaxPlanBytes = 4 << 20
	// maxConcurrent bounds the tasks in flight (sockets, not goroutines).
	maxConcurrent = 64
	// maxTimeout keeps an absurd timeout_ms from overflowing a Duration.
	maxTimeout = time.Hour
)

// getuid and getgid are variables so tests running as root can tell a
// filled id from a zero one.
var getuid, getgid = os.Getuid, os.Getgid

// registry maps each kind to its probe.
var registry = map[Kind]func(context.Context, Task) Result{
	KindDNS:  probeDNS,
	KindTCP:  probeTCP,
	KindUDP:  probeUDP,
	KindHTTP: probeHTTP,
	KindUnix: probeUnix,
	KindFile: probeFile,

	KindListeners: probeListeners,
}

// RunPlan executes every task of p concurrently and returns the results in the
// order of p.Tasks, with the process's own uid and gid. It never panics on a task: a bad task is an Error result.
func RunPlan(ctx context.Context, p Plan) Report {
	results := make([]Result, len(p.Tasks))
	sem := make(chan struct{}, maxConcurrent)
	var wg sync.WaitGroup
	for i := range p.Tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := p.Tasks[i]
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i] = Result{ID: t.ID, Kind: t.Kind, Peer: t.Address, Outcome: Error,
					Detail: "not started: " + ctx.Err().Error()}
				return
			}
			defer func() { <-sem }()
			results[i] = runTask(ctx, t, taskTimeout(t, p))
		}()
	}
	wg.Wait()
	return Report{Version: Version, UID: getuid(), GID: getgid(), Results: results}
}

// taskTimeout is t.TimeoutMS, else p.TimeoutMS, else defaultTimeout.
func taskTimeout(t Task, p Plan) time.Duration {
	ms := t.TimeoutMS
	if ms <= 0 {
		ms = p.TimeoutMS
	}
	if ms <= 0 {
		return defaultTimeout
	}
	if ms > maxTimeout.Milliseconds() {
		return maxTimeout
	}
	return time.Duration(ms) * time.Millisecond
}

// runTask runs one task under its own timeout (started once it holds a
// semaphore slot, so queueing does not eat into it).
func runTask(ctx context.Context, t Task, timeout time.Duration) (r Result) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			r = Result{Outcome: Error, Detail: clip(fmt.Sprintf("probe panicked: %v", v))}
		}
		r.ID, r.Kind = t.ID, t.Kind
		if r.Peer == "" {
			r.Peer = t.Address
		}
		if r.Outcome == "" {
			r.Outcome, r.Detail = Error, "probe returned no outcome"
		}
		r.DurationMS = time.Since(start).Milliseconds()
	}()
	probe, ok := registry[t.Kind]
	if !ok {
		return Result{Outcome: Error, Detail: clip(fmt.Sprintf("unknown probe kind %q", t.Kind))}
	}
	return probe(ctx, t)
}

// Execute parses a plan, runs it and writes the Report to out as one JSON
// document, with the probe process's own uid and gid. An error means no report was written (bad plan or write error).
func Execute(ctx context.Context, planJSON []byte, out io.Writer) error {
	p, err := parsePlan(planJSON)
	if err != nil {
		return err
	}
	rep := RunPlan(ctx, p)
	if rep.Results == nil {
		rep.Results = []Result{}
	}
	return json.NewEncoder(out).Encode(rep)
}

// ReadPlanFile reads a plan file, at most MaxPlanBytes of it.
func ReadPlanFile(path string) ([]byte, error) {
	data, err := readFileAtMost(path, MaxPlanBytes)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return data, nil
}

// RunPlanFile reads, parses and runs a plan file in this process.
func RunPlanFile(ctx context.Context, path string) (Report, error) {
	data, err := ReadPlanFile(path)
	if err != nil {
		return Report{}, err
	}
	p, err := parsePlan(data)
	if err != nil {
		return Report{}, err
	}
	rep := RunPlan(ctx, p)
	if rep.Results == nil {
		rep.Results = []Result{}
	}
	return rep, nil
}

// parsePlan decodes strictly: a field this probe does not know means the
// host and the probe image disagree, which must not pass silently.
func parsePlan(data []byte) (Plan, error) {
	var p Plan
	if len(data) > MaxPlanBytes {
		return p, fmt.Errorf("plan: %d bytes, more than %d", len(data), MaxPlanBytes)
	}
	if err := decodeStrict(data, &p); err != nil {
		return p, fmt.Errorf("plan: %w", err)
	}
	seen := make(map[string]bool, len(p.Tasks))
	for i, t := range p.Tasks {
		if t.ID == "" {
			return p, fmt.Errorf("plan: task %d has no id", i)
		}
		if seen[t.ID] {
			return p, fmt.Errorf("plan: duplicate task id %q", t.ID)
		}
		seen[t.ID] = true
	}
	return p, nil
}

// decodeStrict decodes exactly one JSON object with known fields only.
func decodeStrict(data []byte, v any) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON document")
	}
	return nil
}
