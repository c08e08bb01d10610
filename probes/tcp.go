package probes

import (
	"context"
	"net"
)

// probeTCP dials t.Address: a completed handshake is Connected, nothing
// is sent.
func probeTCP(ctx context.Context, t Task) Result {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	r := Result{Peer: t.Address}
	if t.Address == "" {
		r.Outcome, r.Detail = Error, "tcp task without an address"
		return r
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", t.Address)
	if err != nil {
		r.Outcome, r.Detail = classifyNetError(err), clip(err.Error())
		return r
	}
	r.Outcome, r.Detail = Connected, "remote "+conn.RemoteAddr().String()
	conn.Close()
	return r
}
