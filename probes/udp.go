package probes

import (
	"context"
	"fmt"
	"net"
)

// probeUDP sends t.Payload on a connected UDP socket and waits for any
// reply. No reply is Timeout, which for UDP cannot tell "blocked" from "a
// service that ignores the payload".
func probeUDP(ctx context.Context, t Task) Result {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	r := Result{Peer: t.Address}
	if t.Address == "" {
		r.Outcome, r.Detail = Error, "udp task without an address"
		return r
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", t.Address)
	if err != nil {
		r.Outcome, r.Detail = classifyNetError(err), clip("dial: "+err.Error())
		return r
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		r.Outcome, r.Detail = Error, clip(err.Error())
		return r
	}
	payload := t.Payload
	if len(payload) == 0 {
		payload = []byte{0}
	}
	if _, err := conn.Write(payload); err != nil {
		r.Outcome, r.Detail = classifyNetError(err), clip("write: "+err.Error())
		return r
	}
	buf := make([]byte, 2048)
	n, err := conn.Read(buf)
	if err != nil {
		// ECONNREFUSED here is the ICMP port unreachable of the peer
		r.Outcome, r.Detail = classifyNetError(err), clip("read: "+err.Error())
		return r
	}
	r.Outcome, r.Detail = Connected, fmt.Sprintf("reply of %d bytes", n)
	return r
}
