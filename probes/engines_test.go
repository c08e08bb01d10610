package probes

// Recorded answers of both Docker engine generations the audit meets in the
// field (see docs/docker.md): Docker 20.10 drops what is blocked (the
// embedded resolver never answers an outside name on an internal network,
// a blocked connect times out), Docker >= 25/26 answers at once (SERVFAIL,
// a rejected connect; moby#47145). Every row names the engine it stands
// for. All traffic stays on 127.0.0.1.

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probeQuery is the query probeDNS sends for name: type A, RD set.
func probeQuery(name string) *dns.Msg {
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), dns.TypeA)
	q.RecursionDesired = true
	return q
}

// mustRR parses one RR in zone-file syntax.
func mustRR(s string) dns.RR {
	rr, err := dns.NewRR(s)
	if err != nil {
		panic(err)
	}
	return rr
}

// recordedReply is one reply an engine sends to the probe's query.
type recordedReply struct {
	name  string // which engine, which network, what was asked
	qname string
	build func(q *dns.Msg) *dns.Msg
	rd    bool // flags as the engine sets them, checked on the wire
	ra    bool

	want   Outcome
	rcode  string
	addrs  []string
	detail string
}

// recordedReplies are built the way each engine builds them: moby's
// embedded resolver answers its own names with createRespMsg (SetReply +
// RA), fails with SetRcode (RD echoed, RA clear) and otherwise forwards the
// upstream resolver's reply as it came.
var recordedReplies = []recordedReply{
	{
		name:  "docker>=26 internal network, outside name: SERVFAIL as moby's resolver builds it (RD echoed, RA clear)",
		qname: "example.com",
		build: func(q *dns.Msg) *dns.Msg {
			m := new(dns.Msg)
			m.SetRcode(q, dns.RcodeServerFailure)
			return m
		},
		rd: true, ra: false,
		want: ServFail, rcode: "SERVFAIL",
	},
	{
		name:  "docker>=26 internal network, outside name: SERVFAIL with RD and RA set as a recursive resolver sets them",
		qname: "example.com",
		build: func(q *dns.Msg) *dns.Msg {
			m := new(dns.Msg)
			m.SetRcode(q, dns.RcodeServerFailure)
			m.RecursionAvailable = true
			return m
		},
		rd: true, ra: true,
		want: ServFail, rcode: "SERVFAIL",
	},
	{
		name:  "docker 20.10 and >=26 normal bridge, made-up name: upstream NXDOMAIN with the SOA in authority",
		qname: "ssebench-audit-5f0c2a9e.com",
		build: func(q *dns.Msg) *dns.Msg {
			m := new(dns.Msg)
			m.SetRcode(q, dns.RcodeNameError)
			m.RecursionAvailable = true
			m.Ns = []dns.RR{mustRR("com. 900 IN SOA a.gtld-servers.net. nstld.verisign-grs.com. 1700000000 1800 900 604800 86400")}
			return m
		},
		rd: true, ra: true,
		want: NXDomain, rcode: "NXDOMAIN",
	},
	{
		name:  "docker 20.10 and >=26 normal bridge, outside name: upstream NOERROR with an A record",
		qname: "example.com",
		build: func(q *dns.Msg) *dns.Msg {
			m := new(dns.Msg)
			m.SetReply(q)
			m.RecursionAvailable = true
			m.Answer = []dns.RR{mustRR("example.com. 300 IN A 192.0.2.80")}
			return m
		},
		rd: true, ra: true,
		want: Address, rcode: "NOERROR", addrs: []string{"192.0.2.80"},
	},
	{
		name:  "docker 20.10 and >=26 any network, container name: embedded resolver NOERROR with an A record (TTL 600)",
		qname: "daemon",
		build: func(q *dns.Msg) *dns.Msg {
			m := new(dns.Msg)
			m.SetReply(q) // moby createRespMsg: SetReply + RA
			m.RecursionAvailable = true
			m.Answer = []dns.RR{mustRR("daemon. 600 IN A 172.18.0.3")}
			return m
		},
		rd: true, ra: true,
		want: Address, rcode: "NOERROR", addrs: []string{"172.18.0.3"},
	},
	{
		name:  "docker 20.10 and >=26 normal bridge, outside name: upstream NOERROR with a CNAME only (nodata)",
		qname: "www.example.net",
		build: func(q *dns.Msg) *dns.Msg {
			m := new(dns.Msg)
			m.SetReply(q)
			m.RecursionAvailable = true
			m.Answer = []dns.RR{mustRR("www.example.net. 300 IN CNAME alias.example.net.")}
			m.Ns = []dns.RR{mustRR("example.net. 300 IN SOA ns.example.net. hostmaster.example.net. 1 7200 3600 1209600 300")}
			return m
		},
		rd: true, ra: true,
		want: NoData, rcode: "NOERROR",
	},
	{
		name:  "docker 20.10 and >=26 normal bridge, outside name: upstream REFUSED passed on",
		qname: "example.org",
		build: func(q *dns.Msg) *dns.Msg {
			m := new(dns.Msg)
			m.SetRcode(q, dns.RcodeRefused)
			m.RecursionAvailable = false // a resolver that does not serve this client
			return m
		},
		rd: true, ra: false,
		want: DNSRefused, rcode: "REFUSED",
	},
}

// classifyWire is the path a reply takes once it arrived: unpack, then
// classify.
func classifyWire(wire []byte) (Outcome, []string, string, string, error) {
	m := new(dns.Msg)
	if err := m.Unpack(wire); err != nil {
		return "", nil, "", "", err
	}
	out, addrs, rcode, detail := classifyDNSReply(m)
	return out, addrs, rcode, detail, nil
}

// withID returns wire with the message ID of query (a reply of another ID
// is dropped by the client).
func withID(wire, query []byte) []byte {
	out := append([]byte(nil), wire...)
	copy(out[:2], query[:2])
	return out
}

// replayUDP answers every UDP query on loopback with wire.
func replayUDP(t *testing.T, wire []byte) string {
	addr, _ := udpServer(t, func(q []byte) []byte {
		if len(q) < 2 {
			return nil
		}
		return withID(wire, q)
	})
	return addr
}

// replayTCP answers every DNS-over-TCP query on loopback with wire.
func replayTCP(t *testing.T, wire []byte) string {
	return rawTCP(t, func(c net.Conn) {
		var n uint16
		if binary.Read(c, binary.BigEndian, &n) != nil || n < 2 {
			return
		}
		q := make([]byte, n)
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		out := withID(wire, q)
		c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(out))), out...))
	})
}

func TestEngineDNSReplies(t *testing.T) {
	for _, tt := range recordedReplies {
		t.Run(tt.name, func(t *testing.T) {
			q := probeQuery(tt.qname)
			wire, err := tt.build(q).Pack()
			require.NoError(t, err)

			// the bytes say what the engine says
			var sent dns.Msg
			require.NoError(t, sent.Unpack(wire))
			assert.True(t, sent.Response, "QR")
			assert.Equal(t, tt.rd, sent.RecursionDesired, "RD")
			assert.Equal(t, tt.ra, sent.RecursionAvailable, "RA")
			assert.Equal(t, q.Id, sent.Id)
			require.Len(t, sent.Question, 1)
			assert.Equal(t, dns.Fqdn(tt.qname), sent.Question[0].Name)

			out, addrs, rcode, detail, err := classifyWire(wire)
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
			assert.Equal(t, tt.rcode, rcode)
			assert.Equal(t, tt.addrs, addrs)
			assert.Equal(t, tt.detail, detail)

			// the same bytes through the whole probe, as a peer on
			// loopback sends them
			for _, transport := range []string{"udp", "tcp"} {
				t.Run(transport, func(t *testing.T) {
					addr := replayUDP(t, wire)
					if transport == "tcp" {
						addr = replayTCP(t, wire)
					}
					r := probeDNS(testCtx(t, 2*time.Second), Task{Name: tt.qname, Address: addr, Transport: transport})
					assert.Equal(t, tt.want, r.Outcome, "detail: %s", r.Detail)
					assert.Equal(t, tt.rcode, r.Rcode)
					assert.Equal(t, tt.addrs, r.Addresses)
					assert.Equal(t, tt.detail, r.Detail)
					assert.Equal(t, addr, r.Peer)
				})
			}
		})
	}
}

// silentDNS is an in-process DNS server on loopback whose handler reads the
// query and never writes: Docker 20.10's embedded resolver for an outside
// name on an internal network (the forwarded query is dropped, no reply).
func silentDNS(t *testing.T) (udpAddr, tcpAddr string, queries <-chan string) {
	t.Helper()
	got := make(chan string, 16)
	h := dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		if len(q.Question) == 1 {
			select {
			case got <- w.LocalAddr().Network() + " " + q.Question[0].Name:
			default:
			}
		}
		// no WriteMsg: the client waits until its deadline
	})
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	for _, s := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h}} {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go s.ActivateAndServe()
		<-started
		t.Cleanup(func() { s.Shutdown() })
	}
	return pc.LocalAddr().String(), ln.Addr().String(), got
}

func TestEngineDNSNoReply(t *testing.T) {
	udpAddr, tcpAddr, queries := silentDNS(t)
	const timeout = 300 * time.Millisecond
	tests := []struct {
		name string
		task Task
		seen string
	}{
		{"docker 20.10 internal network, outside name over udp: no reply", Task{Name: "example.com", Address: udpAddr}, "udp example.com."},
		{"docker 20.10 internal network, outside name over tcp: no reply", Task{Name: "example.com", Address: tcpAddr, Transport: "tcp"}, "tcp example.com."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			r := probeDNS(testCtx(t, timeout), tt.task)
			took := time.Since(start)
			assert.Equal(t, Timeout, r.Outcome, "detail: %s", r.Detail)
			assert.Empty(t, r.Rcode, "no reply, no rcode")
			assert.Nil(t, r.Addresses)
			assert.Equal(t, tt.task.Address, r.Peer)
			assert.GreaterOrEqual(t, took, timeout*3/4, "it waited for the reply")
			assert.Less(t, took, timeout+time.Second, "and no longer than the task timeout")
			select {
			case q := <-queries:
				assert.Equal(t, tt.seen, q, "the query reached the server")
			case <-time.After(time.Second):
				t.Fatal("the server saw no query")
			}
		})
	}
}

// Errors as Go's net package builds them: a failed connect is
// *net.OpError{Op: "dial"} around *os.SyscallError{Syscall: "connect"}
// around the errno; a failed read on a connected socket is
// *net.OpError{Op: "read"} around *os.SyscallError{Syscall: "read"}; a
// deadline is *net.OpError around os.ErrDeadlineExceeded (no syscall
// error). TestEngineErrorShapes checks these against real errors.

var (
	blockedTCP = &net.TCPAddr{IP: net.IPv4(172, 18, 0, 1), Port: 2375}
	blockedUDP = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 11), Port: 53}
	localUDP   = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
)

func dialError(errno syscall.Errno) error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: blockedTCP, Err: os.NewSyscallError("connect", errno)}
}

func udpReadError(err error) error {
	return &net.OpError{Op: "read", Net: "udp", Source: localUDP, Addr: blockedUDP, Err: err}
}

// expiredDial is a real dial error of an expired deadline: Go gives up
// before connect(2), so nothing is sent. It is what Docker 20.10's dropped
// connect comes back as once the task deadline passes.
func expiredDial(t *testing.T) error {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", closedTCPPort(t))
	if c != nil {
		c.Close()
	}
	require.Error(t, err)
	return err
}

func TestEngineConnectErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Outcome
	}{
		// Docker 20.10: the blocked packet is dropped, nothing comes back
		{"docker 20.10 blocked tcp connect dropped: dial timeout (real error, expired deadline)", expiredDial(t), Timeout},
		{"docker 20.10 blocked tcp connect dropped: dial timeout (connect write deadline)", &net.OpError{Op: "dial", Net: "tcp", Addr: blockedTCP, Err: os.ErrDeadlineExceeded}, Timeout},
		{"docker 20.10 blocked udp (dns) query dropped: read timeout", udpReadError(os.ErrDeadlineExceeded), Timeout},

		// Docker >= 25: rejected at once (moby#47145)
		{"docker>=25 tcp connect rejected by iptables REJECT with icmp-admin-prohibited or icmp-host-prohibited: EHOSTUNREACH", dialError(syscall.EHOSTUNREACH), Unreachable},
		{"docker>=25 tcp connect rejected with icmp-net-unreachable or no route: ENETUNREACH", dialError(syscall.ENETUNREACH), Unreachable},
		{"docker>=25 tcp connect dropped by nftables or iptables DROP with a socket error: EPERM", dialError(syscall.EPERM), Unreachable},
		{"docker>=25 tcp connect rejected with tcp-reset or icmp-port-unreachable: ECONNREFUSED", dialError(syscall.ECONNREFUSED), Refused},
		{"docker>=25 udp (dns) query rejected with icmp-admin-prohibited: EHOSTUNREACH on read", udpReadError(os.NewSyscallError("read", syscall.EHOSTUNREACH)), Unreachable},
		{"docker>=25 udp (dns) query rejected with icmp-port-unreachable: ECONNREFUSED on read", udpReadError(os.NewSyscallError("read", syscall.ECONNREFUSED)), Refused},
		{"docker>=25 udp (dns) query dropped by nftables DROP in OUTPUT: EPERM on write", &net.OpError{Op: "write", Net: "udp", Source: localUDP, Addr: blockedUDP, Err: os.NewSyscallError("write", syscall.EPERM)}, Unreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var op *net.OpError
			require.True(t, errors.As(tt.err, &op), "wrapped in *net.OpError as Go does")
			assert.Equal(t, tt.want, classifyNetError(tt.err), "error: %v", tt.err)
			// the DNS client hands errors back as they are; a probe may
			// wrap them once more
			assert.Equal(t, tt.want, classifyNetError(&wrapped{tt.err}), "wrapped again")
		})
	}
}

// wrapped is an error that wraps another with a prefix of its own.
type wrapped struct{ err error }

func (w *wrapped) Error() string { return "probe: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

// TestEngineErrorShapes checks that the errors of TestEngineConnectErrors
// have the shape of real ones: a real refused connect and a real refused
// UDP read on loopback (an RST and an ICMP port unreachable on lo), and a
// real read deadline.
func TestEngineErrorShapes(t *testing.T) {
	t.Run("connect", func(t *testing.T) {
		addr := closedTCPPort(t)
		var d net.Dialer
		_, err := d.DialContext(testCtx(t, time.Second), "tcp", addr)
		require.Error(t, err)
		ta, terr := net.ResolveTCPAddr("tcp", addr)
		require.NoError(t, terr)
		synthetic := &net.OpError{Op: "dial", Net: "tcp", Addr: ta, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		assert.Equal(t, synthetic.Error(), err.Error())
		assertSameChain(t, synthetic, err)
	})
	t.Run("udp read", func(t *testing.T) {
		c, err := net.Dial("udp", closedUDPPort(t))
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(time.Second)))
		_, err = c.Write([]byte{0})
		require.NoError(t, err)
		_, err = c.Read(make([]byte, 16))
		require.Error(t, err)
		synthetic := &net.OpError{Op: "read", Net: "udp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", syscall.ECONNREFUSED)}
		assert.Equal(t, synthetic.Error(), err.Error())
		assertSameChain(t, synthetic, err)
	})
	t.Run("read deadline", func(t *testing.T) {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		require.NoError(t, err)
		defer pc.Close()
		c, err := net.Dial("udp", pc.LocalAddr().String())
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetReadDeadline(time.Now().Add(-time.Second)))
		_, err = c.Read(make([]byte, 16))
		require.Error(t, err)
		synthetic := &net.OpError{Op: "read", Net: "udp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.ErrDeadlineExceeded}
		assert.Equal(t, synthetic.Error(), err.Error())
		assertSameChain(t, synthetic, err)
	})
	t.Run("expired dial", func(t *testing.T) {
		err := expiredDial(t)
		var op *net.OpError
		require.True(t, errors.As(err, &op))
		assert.Equal(t, "dial", op.Op)
		assert.True(t, op.Timeout())
		assert.Contains(t, err.Error(), "i/o timeout")
		var se *os.SyscallError
		assert.False(t, errors.As(err, &se), "a timeout carries no syscall error")
	})
}

// assertSameChain checks that want and got wrap the same types in the same
// order, with the same Op, Net, Syscall and errno.
func assertSameChain(t *testing.T, want, got error) {
	t.Helper()
	for want != nil || got != nil {
		require.NotNil(t, want, "got wraps more: %T", got)
		require.NotNil(t, got, "want wraps more: %T", want)
		require.IsType(t, want, got)
		switch w := want.(type) {
		case *net.OpError:
			g := got.(*net.OpError)
			assert.Equal(t, w.Op, g.Op)
			assert.Equal(t, w.Net, g.Net)
		case *os.SyscallError:
			assert.Equal(t, w.Syscall, got.(*os.SyscallError).Syscall)
		case syscall.Errno:
			assert.Equal(t, w, got)
		}
		want, got = errors.Unwrap(want), errors.Unwrap(got)
	}
}
