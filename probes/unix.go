package probes

import (
	"context"
	"errors"
	"net"
	"syscall"
)

// probeUnix connects to the Unix stream socket at t.Path and closes the
// connection at once, sending nothing: connect() alone shows whether this
// uid may talk to the socket. A path starting with "@" is an abstract
// socket name (Linux).
func probeUnix(ctx context.Context, t Task) Result {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	r := Result{Peer: t.Path}
	if t.Path == "" {
		r.Outcome, r.Detail = Error, "unix task without a path"
		return r
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", t.Path)
	if err != nil {
		r.Outcome, r.Detail = classifyUnixError(err), clip("connect: "+err.Error())
		return r
	}
	conn.Close()
	r.Outcome = Connected
	return r
}

// classifyUnixError maps a connect() error on a Unix socket to an outcome.
// A timeout (a listener whose backlog is full) is an Error: the socket was
// reachable but the probe cannot say more.
func classifyUnixError(err error) Outcome {
	switch {
	case err == nil:
		return Connected
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused // a socket file without a listener
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return Denied
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		return NotFound
	}
	return Error
}
