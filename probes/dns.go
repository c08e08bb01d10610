package probes

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/miekg/dns"
)

// maxAddresses bounds Result.Addresses: a reply may carry thousands.
const maxAddresses = 64

// probeDNS sends one A query for t.Name to t.Address (or the container's own
// resolver) and classifies the reply by rcode.
func probeDNS(ctx context.Context, t Task) Result {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if t.Name == "" {
		return Result{Outcome: Error, Detail: "dns task without a name"}
	}
	network := t.Transport
	switch network {
	case "":
		network = "udp"
	case "udp", "tcp":
	default:
		return Result{Outcome: Error, Detail: fmt.Sprintf("unknown dns transport %q", t.Transport)}
	}
	server := t.Address
	if server == "" {
		ns, err := readNameservers(resolvConfPath)
		if err != nil {
			return Result{Outcome: Error, Detail: clip("resolv.conf: " + err.Error())}
		}
		server = net.JoinHostPort(ns[0], resolverPort)
	} else if _, _, err := net.SplitHostPort(server); err != nil {
		server = net.JoinHostPort(server, "53") // a bare IP means the DNS port
	}
	r := Result{Peer: server}

	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(t.Name), dns.TypeA)
	m.RecursionDesired = true
	deadline, _ := ctx.Deadline()
	c := &dns.Client{
		Net: network,
		// the client's own 2s defaults would cut longer task timeouts short
		Timeout: time.Until(deadline),
		// a large buffer so an oversized UDP reply is parsed, not cut
		UDPSize: dns.MaxMsgSize,
	}
	resp, _, err := c.ExchangeContext(ctx, m, server)
	if err != nil {
		r.Outcome = classifyNetError(err)
		r.Detail = clip(err.Error())
		return r
	}
	r.Rcode = rcodeText(resp.Rcode)
	switch resp.Rcode {
	case dns.RcodeSuccess:
		for _, rr := range resp.Answer {
			switch a := rr.(type) {
			case *dns.A:
				r.Addresses = append(r.Addresses, a.A.String())
			case *dns.AAAA:
				r.Addresses = append(r.Addresses, a.AAAA.String())
			}
		}
		if len(r.Addresses) > 0 {
			r.Outcome = Address
		} else {
			r.Outcome = NoData
		}
		if n := len(r.Addresses); n > maxAddresses {
			r.Addresses = r.Addresses[:maxAddresses]
			r.Detail = fmt.Sprintf("%d addresses, first %d kept", n, maxAddresses)
		}
	case dns.RcodeNameError:
		r.Outcome = NXDomain
	case dns.RcodeServerFailure:
		r.Outcome = ServFail
	case dns.RcodeRefused:
		r.Outcome = DNSRefused
	default:
		r.Outcome = OtherRcode
	}
	if resp.Truncated && r.Detail == "" {
		r.Detail = "reply truncated (TC bit)"
	}
	return r
}

func rcodeText(rc int) string {
	if s, ok := dns.RcodeToString[rc]; ok {
		return s
	}
	return fmt.Sprintf("RCODE%d", rc)
}

// defaultTimeout bounds a probe run without a deadline (a task or plan
// without a timeout, or a probe called directly).
const defaultTimeout = 3 * time.Second

// withDefaultTimeout makes sure ctx has a deadline: every probe is bounded.
func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, defaultTimeout)
}
