package probes

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every helper listens on 127.0.0.1 only: the tests never send traffic
// anywhere else.

// testCtx returns a context that ends after d.
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// closedTCPPort returns a loopback address that was just listened on and
// closed: connecting to it is refused.
func closedTCPPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// closedUDPPort is closedTCPPort for UDP: a datagram to it draws an ICMP
// port unreachable.
func closedUDPPort(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := pc.LocalAddr().String()
	require.NoError(t, pc.Close())
	return addr
}

// rawTCP serves each accepted connection with handle; cleanup closes the
// listener and every connection and waits for the handlers.
func rawTCP(t *testing.T, handle func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// readHead reads a request up to and including the blank line.
func readHead(c net.Conn) string {
	var buf []byte
	one := make([]byte, 1)
	for len(buf) < 64<<10 {
		if _, err := c.Read(one); err != nil {
			break
		}
		buf = append(buf, one[0])
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			break
		}
	}
	return string(buf)
}

// udpServer answers each datagram with reply(payload); a nil reply means
// stay silent. It returns the address and a channel of received payloads.
func udpServer(t *testing.T, reply func([]byte) []byte) (string, <-chan []byte) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	got := make(chan []byte, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			p := append([]byte(nil), buf[:n]...)
			select {
			case got <- p:
			default:
			}
			if out := reply(p); out != nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return pc.LocalAddr().String(), got
}
