package report

import (
	"encoding/json"
	"io"
	"time"
)

// Evidence is what makes a report evidence of a deployment's state: which
// engine, which networks and which probe image it is about, and when.
type Evidence struct {
	EngineID     string       `json:"engine_id"`
	Networks     []NetworkRef `json:"networks"`
	ProbeImage   string       `json:"probe_image,omitempty"`
	ProbeImageID string       `json:"probe_image_id,omitempty"`
	EndedAt      time.Time    `json:"ended_at"`
}

// NetworkRef names one audited network.
type NetworkRef struct {
	Project  string `json:"project"`
	Name     string `json:"name"`
	ID       string `json:"id"`
	Internal bool   `json:"internal"`
}

// Attestation is the gate's record: the JSON report, and what ties it to
// one engine, its networks and the probe that looked at them.
type Attestation struct {
	Kind   string `json:"kind"` // "ssebench-audit gate attestation"
	Tool   Tool   `json:"tool"`
	Engine struct {
		Engine
		ID string `json:"id"`
	} `json:"engine"`
	Networks   []NetworkRef `json:"networks"`
	ProbeImage struct {
		Ref string `json:"ref,omitempty"`
		ID  string `json:"id,omitempty"`
	} `json:"probe_image"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Verdict   Verdict   `json:"verdict"`
	ExitCode  int       `json:"exit_code"`
	Report    *Report   `json:"report"`
}

// NewAttestation binds a finished report to its evidence.
func NewAttestation(r *Report, ev *Evidence) *Attestation {
	a := &Attestation{Kind: "ssebench-audit gate attestation", Tool: r.Tool, Networks: ev.Networks,
		StartedAt: r.StartedAt, EndedAt: ev.EndedAt, Verdict: r.Verdict, ExitCode: r.ExitCode(), Report: r}
	a.Engine.Engine, a.Engine.ID = r.Engine, ev.EngineID
	a.ProbeImage.Ref, a.ProbeImage.ID = ev.ProbeImage, ev.ProbeImageID
	if a.Networks == nil {
		a.Networks = []NetworkRef{}
	}
	return a
}

// WriteAttestation writes the attestation as indented JSON.
func WriteAttestation(w io.Writer, a *Attestation) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}
