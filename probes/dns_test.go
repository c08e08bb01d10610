package probes

import (
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dnsHandler answers per name. It refuses queries without RD or not of type
// A, so the address cases also check how the probe asks.
func dnsHandler(w dns.ResponseWriter, q *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(q)
	if len(q.Question) != 1 || !q.RecursionDesired || q.Question[0].Qtype != dns.TypeA {
		m.Rcode = dns.RcodeRefused
		w.WriteMsg(m)
		return
	}
	name := q.Question[0].Name
	rr := func(s string) dns.RR {
		r, err := dns.NewRR(name + " 60 IN " + s)
		if err != nil {
			panic(err)
		}
		return r
	}
	switch strings.TrimSuffix(name, ".") {
	case "address.test":
		m.Answer = []dns.RR{rr("A 192.0.2.10"), rr("A 192.0.2.11")}
	case "aaaa.test":
		m.Answer = []dns.RR{rr("AAAA 2001:db8::1")}
	case "many.test":
		for i := 0; i < 100; i++ {
			m.Answer = append(m.Answer, rr("A 192.0.2."+string(rune('0'+i%10))))
		}
	case "cname.test":
		m.Answer = []dns.RR{rr("CNAME elsewhere.test.")}
	case "nodata.test":
	case "nxdomain.test":
		m.Rcode = dns.RcodeNameError
	case "servfail.test":
		m.Rcode = dns.RcodeServerFailure
	case "refused.test":
		m.Rcode = dns.RcodeRefused
	case "notimp.test":
		m.Rcode = dns.RcodeNotImplemented
	case "timeout.test":
		return // never answers
	default:
		m.Rcode = dns.RcodeNameError
	}
	w.WriteMsg(m)
}

// dnsServers starts the handler on loopback over UDP and TCP.
func dnsServers(t *testing.T) (udpAddr, tcpAddr string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	for _, s := range []*dns.Server{
		{PacketConn: pc, Handler: dns.HandlerFunc(dnsHandler)},
		{Listener: ln, Handler: dns.HandlerFunc(dnsHandler)},
	} {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go s.ActivateAndServe()
		<-started
		t.Cleanup(func() { s.Shutdown() })
	}
	return pc.LocalAddr().String(), ln.Addr().String()
}

func TestProbeDNS(t *testing.T) {
	udpAddr, tcpAddr := dnsServers(t)
	tests := []struct {
		name      string
		task      Task
		want      Outcome
		rcode     string
		addresses []string
	}{
		{"address udp", Task{Name: "address.test", Address: udpAddr}, Address, "NOERROR", []string{"192.0.2.10", "192.0.2.11"}},
		{"address tcp", Task{Name: "address.test.", Address: tcpAddr, Transport: "tcp"}, Address, "NOERROR", []string{"192.0.2.10", "192.0.2.11"}},
		{"aaaa counts as an address", Task{Name: "aaaa.test", Address: udpAddr}, Address, "NOERROR", []string{"2001:db8::1"}},
		{"cname only is nodata", Task{Name: "cname.test", Address: udpAddr}, NoData, "NOERROR", nil},
		{"nodata", Task{Name: "nodata.test", Address: udpAddr}, NoData, "NOERROR", nil},
		{"nxdomain", Task{Name: "nxdomain.test", Address: udpAddr}, NXDomain, "NXDOMAIN", nil},
		{"nxdomain tcp", Task{Name: "nxdomain.test", Address: tcpAddr, Transport: "tcp"}, NXDomain, "NXDOMAIN", nil},
		{"servfail", Task{Name: "servfail.test", Address: udpAddr}, ServFail, "SERVFAIL", nil},
		{"refused rcode", Task{Name: "refused.test", Address: udpAddr}, DNSRefused, "REFUSED", nil},
		{"other rcode", Task{Name: "notimp.test", Address: udpAddr}, OtherRcode, "NOTIMP", nil},
		{"timeout udp", Task{Name: "timeout.test", Address: udpAddr}, Timeout, "", nil},
		{"timeout tcp", Task{Name: "timeout.test", Address: tcpAddr, Transport: "tcp"}, Timeout, "", nil},
		{"port unreachable udp", Task{Name: "address.test", Address: closedUDPPort(t)}, Refused, "", nil},
		{"connection refused tcp", Task{Name: "address.test", Address: closedTCPPort(t), Transport: "tcp"}, Refused, "", nil},
		{"no name", Task{Address: udpAddr}, Error, "", nil},
		{"bad transport", Task{Name: "address.test", Address: udpAddr, Transport: "quic"}, Error, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			r := probeDNS(testCtx(t, 300*time.Millisecond), tt.task)
			assert.Equal(t, tt.want, r.Outcome, "detail: %s", r.Detail)
			assert.Equal(t, tt.rcode, r.Rcode)
			assert.Equal(t, tt.addresses, r.Addresses)
			assert.Less(t, time.Since(start), time.Second, "one timeout at most")
			if tt.task.Address != "" && tt.want != Error {
				assert.Equal(t, tt.task.Address, r.Peer)
			}
		})
	}
}

func TestProbeDNSManyAddressesBounded(t *testing.T) {
	udpAddr, _ := dnsServers(t)
	r := probeDNS(testCtx(t, time.Second), Task{Name: "many.test", Address: udpAddr})
	assert.Equal(t, Address, r.Outcome)
	assert.Len(t, r.Addresses, maxAddresses)
	assert.Contains(t, r.Detail, "100 addresses")
}

// useResolvConf points the probe's default resolver at content, with the
// "port 53" of the probe replaced by port (a server of the test's own).
func useResolvConf(t *testing.T, content, port string) {
	oldPath, oldPort := resolvConfPath, resolverPort
	resolvConfPath, resolverPort = writeTemp(t, content), port
	t.Cleanup(func() { resolvConfPath, resolverPort = oldPath, oldPort })
}

func TestProbeDNSDefaultResolver(t *testing.T) {
	udpAddr, tcpAddr := dnsServers(t)
	_, udpPort, _ := net.SplitHostPort(udpAddr)
	_, tcpPort, _ := net.SplitHostPort(tcpAddr)

	t.Run("first nameserver of resolv.conf, udp", func(t *testing.T) {
		useResolvConf(t, "# docker\nnameserver 127.0.0.1\nnameserver 192.0.2.1\noptions ndots:0\n", udpPort)
		r := probeDNS(testCtx(t, 300*time.Millisecond), Task{Name: "address.test"})
		assert.Equal(t, Address, r.Outcome, r.Detail)
		assert.Equal(t, udpAddr, r.Peer)
	})
	t.Run("first nameserver of resolv.conf, tcp", func(t *testing.T) {
		useResolvConf(t, "nameserver 127.0.0.1\n", tcpPort)
		r := probeDNS(testCtx(t, 300*time.Millisecond), Task{Name: "servfail.test", Transport: "tcp"})
		assert.Equal(t, ServFail, r.Outcome, r.Detail)
		assert.Equal(t, tcpAddr, r.Peer)
	})
	t.Run("no nameserver", func(t *testing.T) {
		useResolvConf(t, "search x\n", udpPort)
		r := probeDNS(testCtx(t, 300*time.Millisecond), Task{Name: "address.test"})
		assert.Equal(t, Error, r.Outcome)
		assert.Contains(t, r.Detail, "resolv.conf")
	})
	t.Run("no resolv.conf", func(t *testing.T) {
		useResolvConf(t, "", udpPort)
		resolvConfPath += ".absent"
		r := probeDNS(testCtx(t, 300*time.Millisecond), Task{Name: "address.test"})
		assert.Equal(t, Error, r.Outcome)
	})
}

// garbledUDP replies to each query with reply(query).
func garbledUDP(t *testing.T, reply func(q []byte) []byte) string {
	addr, _ := udpServer(t, reply)
	return addr
}

func TestProbeDNSGarbled(t *testing.T) {
	// right ID, claims one answer, carries none: the unpack fails
	badBody := func(q []byte) []byte {
		out := make([]byte, 12)
		copy(out, q[:2])
		out[2] = 0x81                              // QR, RD
		binary.BigEndian.PutUint16(out[6:], 1)     // ANCOUNT 1
		return append(out, 0xff, 0xff, 0xff, 0xff) // not a name
	}
	tcpGarbled := rawTCP(t, func(c net.Conn) {
		var n uint16
		if binary.Read(c, binary.BigEndian, &n) != nil {
			return
		}
		q := make([]byte, n)
		if _, err := c.Read(q); err != nil {
			return
		}
		b := badBody(q)
		c.Write(append([]byte{0, byte(len(b))}, b...))
	})
	tests := []struct {
		name string
		task Task
	}{
		{"short udp reply", Task{Name: "x.test", Address: garbledUDP(t, func([]byte) []byte { return []byte("garbage") })}},
		{"undecodable udp reply", Task{Name: "x.test", Address: garbledUDP(t, badBody)}},
		{"undecodable tcp reply", Task{Name: "x.test", Address: tcpGarbled, Transport: "tcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := probeDNS(testCtx(t, 300*time.Millisecond), tt.task)
			assert.Equal(t, Error, r.Outcome)
			assert.NotEmpty(t, r.Detail)
		})
	}
}

// dnsOutcomes are the outcomes a reply that came back may have.
var dnsOutcomes = map[Outcome]bool{Address: true, NoData: true, NXDomain: true, ServFail: true, DNSRefused: true, OtherRcode: true}

// FuzzDNSAnswer feeds raw reply bytes through the path a real reply takes
// (unpack, then classifyDNSReply): never a panic, only DNS outcomes, only
// real addresses, and the bounds of Result.
func FuzzDNSAnswer(f *testing.F) {
	pack := func(m *dns.Msg) []byte {
		b, err := m.Pack()
		if err != nil {
			panic(err)
		}
		return b
	}
	for _, rr := range recordedReplies {
		f.Add(pack(rr.build(probeQuery(rr.qname))))
	}
	q := probeQuery("many.test")
	many := new(dns.Msg)
	many.SetReply(q)
	for i := 0; i < maxAddresses+6; i++ {
		many.Answer = append(many.Answer, &dns.A{Hdr: dns.RR_Header{Name: "many.test.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1}, A: net.IPv4(192, 0, 2, byte(i))})
	}
	f.Add(pack(many))
	mixed := new(dns.Msg)
	mixed.SetReply(q)
	mixed.Truncated = true
	mixed.Answer = []dns.RR{
		mustRR("many.test. 1 IN CNAME x.test."),
		mustRR("x.test. 1 IN AAAA 2001:db8::1"),
		mustRR("x.test. 1 IN A 192.0.2.1"),
		mustRR("x.test. 1 IN TXT \"hello\""),
	}
	mixed.SetEdns0(4096, false)
	f.Add(pack(mixed))
	ext := new(dns.Msg)
	ext.SetRcode(q, dns.RcodeBadVers) // extended rcode through the OPT record
	ext.SetEdns0(1232, true)
	f.Add(pack(ext))
	for _, rc := range []int{dns.RcodeFormatError, dns.RcodeNotImplemented, dns.RcodeYXDomain, 15} {
		m := new(dns.Msg)
		m.SetRcode(q, rc)
		f.Add(pack(m))
	}
	f.Add([]byte{})
	f.Add([]byte("garbage"))
	f.Add([]byte{0, 1, 0x81, 0x80, 0, 0, 0, 1, 0, 0, 0, 0})                         // ANCOUNT 1, no answer
	f.Add([]byte{0, 1, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1})   // a name pointing at itself
	f.Add([]byte{0, 1, 0x85, 0x83, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}) // NXDOMAIN, trailing bytes

	f.Fuzz(func(t *testing.T, wire []byte) {
		m := new(dns.Msg)
		if m.Unpack(wire) != nil {
			return // the client reports an unpack error as Error
		}
		out, addrs, rcode, detail := classifyDNSReply(m)
		require.True(t, knownOutcomes[out], "unknown outcome %q", out)
		require.True(t, dnsOutcomes[out], "outcome %q for a reply", out)
		require.Equal(t, rcodeText(m.Rcode), rcode)
		require.NotEmpty(t, rcode)
		require.LessOrEqual(t, len(addrs), maxAddresses)
		require.LessOrEqual(t, len(detail), maxDetail)
		if m.Rcode != dns.RcodeSuccess {
			require.Nil(t, addrs, "addresses only with NOERROR")
		}
		require.Equal(t, out == Address, len(addrs) > 0, "Address iff an address was kept")
		for _, a := range addrs {
			ip, err := netip.ParseAddr(a)
			require.NoError(t, err, "address %q", a)
			require.Equal(t, ip.String(), a)
		}
	})
}

// TestClassifyDNSReplyNoRdata: an A or AAAA record with RDLENGTH 0 unpacks
// with a nil IP; it is not an address (it was reported as "<nil>", found
// by FuzzDNSAnswer).
func TestClassifyDNSReplyNoRdata(t *testing.T) {
	q := probeQuery("x.test")
	reply := func(rrs ...dns.RR) []byte {
		m := new(dns.Msg)
		m.SetReply(q)
		m.Answer = rrs
		b, err := m.Pack()
		require.NoError(t, err)
		return b
	}
	empty := func(typ uint16) dns.RR {
		return &dns.RFC3597{Hdr: dns.RR_Header{Name: "x.test.", Rrtype: typ, Class: dns.ClassINET, Ttl: 1}}
	}
	tests := []struct {
		name  string
		wire  []byte
		want  Outcome
		addrs []string
	}{
		{"empty A only", reply(empty(dns.TypeA)), NoData, nil},
		{"empty AAAA only", reply(empty(dns.TypeAAAA)), NoData, nil},
		{"empty A then a real one", reply(empty(dns.TypeA), mustRR("x.test. 1 IN A 192.0.2.7"), empty(dns.TypeAAAA)), Address, []string{"192.0.2.7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m dns.Msg
			require.NoError(t, m.Unpack(tt.wire))
			out, addrs, rcode, _ := classifyDNSReply(&m)
			assert.Equal(t, tt.want, out)
			assert.Equal(t, tt.addrs, addrs)
			assert.Equal(t, "NOERROR", rcode)
			// and through the probe, from a loopback peer
			r := probeDNS(testCtx(t, time.Second), Task{Name: "x.test", Address: replayUDP(t, tt.wire)})
			assert.Equal(t, tt.want, r.Outcome, r.Detail)
			assert.Equal(t, tt.addrs, r.Addresses)
		})
	}
	out, addrs, _, _ := classifyDNSReply(nil)
	assert.Equal(t, Error, out)
	assert.Nil(t, addrs)
}
