// Package probes holds the code that runs inside probe containers: one file
// per probe kind, each returning a typed outcome, and a runner that executes a
// whole plan concurrently and reports JSON to the host.
package probes

// Kind names a probe kind; the registry in runner.go maps each to its func.
type Kind string

const (
	KindDNS  Kind = "dns"
	KindTCP  Kind = "tcp"
	KindUDP  Kind = "udp"
	KindHTTP Kind = "http"
)

// Task is one probe the host asks a probe container to run.
type Task struct {
	ID   string `json:"id"` // opaque key the host uses to map the result back
	Kind Kind   `json:"kind"`

	// Address is host:port for tcp, udp and http (the server to dial) and
	// for dns (the resolver; empty means the first nameserver of
	// /etc/resolv.conf, i.e. the container's own resolver).
	Address string `json:"address,omitempty"`

	// DNS
	Name      string `json:"name,omitempty"`      // the name to resolve (type A)
	Transport string `json:"transport,omitempty"` // "udp" (default) or "tcp"

	// UDP: payload to send (a reply of any kind means "connected").
	Payload []byte `json:"payload,omitempty"`

	// HTTP: one request on a fresh connection to Address, no redirects.
	Method string            `json:"method,omitempty"`
	Target string            `json:"target,omitempty"` // request target as written on the request line: "/x", "http://h/x", "h:443" (CONNECT)
	Host   string            `json:"host,omitempty"`   // Host header; default Address
	Header map[string]string `json:"header,omitempty"`
	Body   string            `json:"body,omitempty"`

	TimeoutMS int64 `json:"timeout_ms,omitempty"` // per task; default Plan.TimeoutMS
	MaxBytes  int64 `json:"max_bytes,omitempty"`  // bound on bytes read; default DefaultMaxBytes
}

// Plan is everything one probe container runs, concurrently.
type Plan struct {
	TimeoutMS int64  `json:"timeout_ms"`
	Tasks     []Task `json:"tasks"`
}

// Outcome classifies what happened; the host maps outcomes to verdicts.
type Outcome string

const (
	// connect outcomes (tcp, udp, http)
	Connected   Outcome = "connected"   // a handshake completed or a reply came back
	Refused     Outcome = "refused"     // RST / ICMP port unreachable
	Unreachable Outcome = "unreachable" // ICMP host/net unreachable, no route, EPERM
	Timeout     Outcome = "timeout"     // nothing came back in time

	// DNS outcomes (a response came back with this rcode)
	Address    Outcome = "address"     // NOERROR with at least one A/AAAA record
	NoData     Outcome = "nodata"      // NOERROR without an address
	NXDomain   Outcome = "nxdomain"    // NXDOMAIN
	ServFail   Outcome = "servfail"    // SERVFAIL
	DNSRefused Outcome = "dns-refused" // REFUSED
	OtherRcode Outcome = "other-rcode" // any other rcode (FORMERR, NOTIMP, ...)

	// HTTP: a response was read (status and body summary in HTTPResult).
	Response Outcome = "response"
	// HTTP: the peer accepted the connection, then closed or reset it
	// without sending a byte (e.g. a proxy dropping a CONNECT).
	Closed Outcome = "closed"

	Error Outcome = "error" // the probe itself could not run (bad task, no resolv.conf, ...)
)

// DefaultMaxBytes bounds every read a probe makes of what a peer sends.
const DefaultMaxBytes = 64 << 10

// Result is what one task observed.
type Result struct {
	ID         string      `json:"id"`
	Kind       Kind        `json:"kind"`
	Outcome    Outcome     `json:"outcome"`
	Detail     string      `json:"detail,omitempty"` // error text or a short description
	Peer       string      `json:"peer,omitempty"`   // the address actually used (resolver, dialled address)
	DurationMS int64       `json:"duration_ms"`
	Addresses  []string    `json:"addresses,omitempty"` // DNS answers
	Rcode      string      `json:"rcode,omitempty"`     // DNS rcode as text
	HTTP       *HTTPResult `json:"http,omitempty"`
}

// HTTPResult summarises a response without keeping what may be a secret:
// the body is kept as length and sha256; only a short excerpt is kept, and
// only the host decides whether it may be shown.
type HTTPResult struct {
	Status     int               `json:"status"`
	Header     map[string]string `json:"header,omitempty"` // a few headers (Content-Type, Location, Server)
	BodyBytes  int64             `json:"body_bytes"`       // bytes read (bounded by MaxBytes)
	Truncated  bool              `json:"truncated"`        // the body was longer than MaxBytes
	BodySHA256 string            `json:"body_sha256"`
	Excerpt    string            `json:"excerpt,omitempty"` // first bytes of the body, at most 256
}

// Report is what a probe container prints on stdout, as one JSON document.
type Report struct {
	Version string   `json:"version"`
	Results []Result `json:"results"`
}
