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
	KindUnix Kind = "unix" // connect() to the Unix stream socket at Path, close at once, send nothing
	KindFile Kind = "file" // lstat of Path and of its parent directory
	// KindListeners reads what the probe's network namespace listens on
	// (Path is the proc root, default /proc).
	KindListeners Kind = "listeners"
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
	// KeepExcerpt fills HTTPResult.Excerpt; without it no body byte is
	// kept (a body may be a leaked secret such as a reference patch).
	KeepExcerpt bool `json:"keep_excerpt,omitempty"`
	// InspectJSON fills HTTPResult.JSONKeys and DiffLike from the body
	// read (never more than MaxBytes).
	InspectJSON bool `json:"inspect_json,omitempty"`

	// Unix, file: the path to connect to or to lstat.
	Path string `json:"path,omitempty"`

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

	// unix, file outcomes (unix also uses Connected and Refused)
	Denied   Outcome = "denied"    // EACCES / EPERM
	NotFound Outcome = "not-found" // ENOENT / ENOTDIR
	Exists   Outcome = "exists"    // file: lstat succeeded

	// listeners: the tables were read (Listeners lists what was found)
	Listed Outcome = "listed"

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
	// Connected (http): the TCP connect completed, whatever came after; it
	// tells "nothing listening" from "connected but never answered".
	Connected bool        `json:"connected,omitempty"`
	File      *FileResult `json:"file,omitempty"` // file
	// Listeners (listeners): every TCP socket listening and UDP socket
	// bound in the namespace, at most MaxListeners.
	Listeners []Listener `json:"listeners,omitempty"`
}

// Listener is one listening socket.
type Listener struct {
	Proto   string `json:"proto"`   // tcp or udp
	Address string `json:"address"` // the local address it is bound to: "0.0.0.0", "::", "127.0.0.1", ...
	Port    int    `json:"port"`
	UID     int    `json:"uid"`
	// Process is the command line of a process holding the socket, short
	// and printable, where the probe could read it (as root).
	Process string `json:"process,omitempty"`
}

// FileResult is what lstat says of a path and of its parent directory.
//
// When the path itself could not be lstat'ed (Outcome NotFound, Denied or
// Error), Mode is "" and UID and GID are -1; Dir and DirWritable are still
// filled when the parent could be lstat'ed. A Dir has its own Dir nil; its
// DirWritable is about its own parent (the grandparent of the path).
type FileResult struct {
	Mode   string      `json:"mode"`   // os.FileMode.String(), e.g. "Srw-------", "dtrwxrwxrwx"
	Perm   uint32      `json:"perm"`   // permission bits plus 04000 setuid, 02000 setgid, 01000 sticky
	Socket bool        `json:"socket"` // a Unix socket
	UID    int         `json:"uid"`
	GID    int         `json:"gid"`
	Dir    *FileResult `json:"dir,omitempty"` // the parent directory
	// DirWritable: access(parent, W_OK) succeeds for the probe's own uid
	// and gids, i.e. this user may create entries there (and replace or
	// remove them unless the parent is sticky, Dir.Perm&01000, and the
	// entry is someone else's). Always true for root on a writable fs.
	DirWritable bool `json:"dir_writable"`
}

// HTTPResult summarises a response without keeping what may be a secret:
// the body is kept as length and sha256; a short excerpt only when the task
// asks for it, and only the host decides whether it may be shown.
type HTTPResult struct {
	Status     int               `json:"status"`
	Header     map[string]string `json:"header,omitempty"` // a few headers (Content-Type, Location, Server)
	BodyBytes  int64             `json:"body_bytes"`       // bytes read (bounded by MaxBytes)
	Truncated  bool              `json:"truncated"`        // the body was longer than MaxBytes
	BodySHA256 string            `json:"body_sha256"`
	Excerpt    string            `json:"excerpt,omitempty"` // first bytes of the body, at most 256; only with Task.KeepExcerpt
	// JSONKeys (Task.InspectJSON): the object keys of the body as dotted
	// paths ("a", "a.b", "a[].c"), sorted, deduplicated, at most
	// MaxJSONKeys of at most MaxJSONKeyBytes each; never a value. Partial
	// when the body was truncated.
	JSONKeys []string `json:"json_keys,omitempty"`
	// DiffLike (Task.InspectJSON): a unified-diff header ("diff --git ",
	// "--- " then "+++ ", "@@ -" at a line start) in the body or in one of
	// its JSON strings.
	DiffLike bool `json:"diff_like,omitempty"`
}

// Bounds on HTTPResult.JSONKeys.
const (
	MaxJSONKeys     = 256
	MaxJSONKeyBytes = 128
)

// Report is what a probe container prints on stdout, as one JSON document.
type Report struct {
	Version string   `json:"version"`
	UID     int      `json:"uid"` // the probe process's own uid and gid
	GID     int      `json:"gid"`
	Results []Result `json:"results"`
}
