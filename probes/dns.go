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
	r.Outcome, r.Addresses, r.Rcode, r.Detail = classifyDNSReply(resp)
	return r
}

// classifyDNSReply turns a reply that unpacked into an outcome by rcode,
// the A and AAAA addresses of its answer section (at most maxAddresses)
// and the rcode as text; detail notes what was dropped or odd (never peer
// bytes). It reads only m and never panics: m is whatever a peer sent.
func classifyDNSReply(m *dns.Msg) (out Outcome, addrs []string, rcode, detail string) {
	if m == nil {
		return Error, nil, "", "no reply"
	}
	rcode = rcodeText(m.Rcode)
	switch m.Rcode {
	case dns.RcodeSuccess:
		n := 0
		for _, rr := range m.Answer {
			var ip net.IP
			switch a := rr.(type) {
			case *dns.A:
				ip = a.A.To4()
			case *dns.AAAA:
				if len(a.AAAA) == net.IPv6len {
					ip = a.AAAA
				}
			default:
				continue
			}
			if ip == nil {
				// an A/AAAA record without rdata (RDLENGTH 0) unpacks
				// with a nil IP: not an address
				continue
			}
			n++
			if len(addrs) < maxAddresses {
				addrs = append(addrs, ip.String())
			}
		}
		if n > 0 {
			out = Address
		} else {
			out = NoData
		}
		if n > maxAddresses {
			detail = fmt.Sprintf("%d addresses, first %d kept", n, maxAddresses)
		}
	case dns.RcodeNameError:
		out = NXDomain
	case dns.RcodeServerFailure:
		out = ServFail
	case dns.RcodeRefused:
		out = DNSRefused
	default:
		out = OtherRcode
	}
	if m.Truncated && detail == "" {
		detail = "reply truncated (TC bit)"
	}
	return out, addrs, rcode, detail
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
