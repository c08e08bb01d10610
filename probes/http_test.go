package probes

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// seen is what the httptest handler observed of the probe's request.
type seen struct {
	Method, RequestURI, Host, Body, Header string
	Close                                  bool
}

func TestProbeHTTPServer(t *testing.T) {
	var hits atomic.Int64
	got := make(chan seen, 16)
	big := bytes.Repeat([]byte("0123456789"), 1000)
	// "é" straddles byte 256: the excerpt must not keep half a rune
	utf := strings.Repeat("a", 255) + "é" + strings.Repeat("b", 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, string(body), r.Header.Get("X-Probe"), r.Close}
		w.Header().Set("Server", "stub/1")
		w.Header().Set("X-Secret", "not reported")
		switch r.URL.Path {
		case "/hello":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "hello world")
		case "/reference/patch":
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "forbidden\n")
		case "/redirect":
			http.Redirect(w, r, "http://192.0.2.1/elsewhere", http.StatusFound)
		case "/big":
			w.Write(big)
		case "/exact":
			w.Header().Set("Content-Length", "1000")
			w.Write(big[:1000])
		case "/binary":
			w.Write([]byte{0x00, 0x01, 0xff, 0xfe})
		case "/control":
			io.WriteString(w, "ok\x1b[31mred")
		case "/utf8":
			io.WriteString(w, utf)
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	tests := []struct {
		name    string
		task    Task
		status  int
		body    []byte // nil: not checked
		excerpt string
		trunc   bool
		header  map[string]string
		seen    seen
	}{
		{
			name: "get", task: Task{Target: "/hello", Header: map[string]string{"X-Probe": "1"}},
			status: 200, body: []byte("hello world"), excerpt: "hello world",
			header: map[string]string{"Content-Type": "text/plain", "Server": "stub/1", "Content-Length": "11"},
			seen:   seen{Method: "GET", RequestURI: "/hello", Host: addr, Header: "1", Close: true},
		},
		{
			name: "default target and method", task: Task{},
			status: 404, seen: seen{Method: "GET", RequestURI: "/", Host: addr, Close: true},
		},
		{
			name: "host header", task: Task{Target: "/reference/patch", Host: "daemon:4263"},
			status: 403, body: []byte("forbidden\n"), excerpt: "forbidden\n",
			seen: seen{Method: "GET", RequestURI: "/reference/patch", Host: "daemon:4263", Close: true},
		},
		{
			name: "post with body", task: Task{Method: "POST", Target: "/tool/none?action=x", Body: `{"grading":true}`},
			status: 404, seen: seen{Method: "POST", RequestURI: "/tool/none?action=x", Host: addr, Body: `{"grading":true}`, Close: true},
		},
		{
			name: "absolute-URI GET goes out as written", task: Task{Target: "http://192.0.2.1:80/"},
			status: 404, seen: seen{Method: "GET", RequestURI: "http://192.0.2.1:80/", Host: "192.0.2.1:80", Close: true},
		},
		{
			name: "redirect is not followed", task: Task{Target: "/redirect"},
			status: 302,
			seen:   seen{Method: "GET", RequestURI: "/redirect", Host: addr, Close: true},
		},
		{
			name: "body over the bound", task: Task{Target: "/big", MaxBytes: 1000},
			status: 200, body: big[:1000], excerpt: string(big[:256]), trunc: true,
			seen: seen{Method: "GET", RequestURI: "/big", Host: addr, Close: true},
		},
		{
			name: "body exactly at the bound", task: Task{Target: "/exact", MaxBytes: 1000},
			status: 200, body: big[:1000], excerpt: string(big[:256]),
			seen: seen{Method: "GET", RequestURI: "/exact", Host: addr, Close: true},
		},
		{
			name: "binary body", task: Task{Target: "/binary"},
			status: 200, body: []byte{0x00, 0x01, 0xff, 0xfe}, excerpt: "(binary)",
			seen: seen{Method: "GET", RequestURI: "/binary", Host: addr, Close: true},
		},
		{
			name: "control bytes are binary", task: Task{Target: "/control"},
			status: 200, body: []byte("ok\x1b[31mred"), excerpt: "(binary)",
			seen: seen{Method: "GET", RequestURI: "/control", Host: addr, Close: true},
		},
		{
			name: "excerpt cut on a rune boundary", task: Task{Target: "/utf8"},
			status: 200, body: []byte(utf), excerpt: strings.Repeat("a", 255),
			seen: seen{Method: "GET", RequestURI: "/utf8", Host: addr, Close: true},
		},
		{
			name: "empty body", task: Task{Target: "/empty"},
			status: 204, body: []byte{},
			seen: seen{Method: "GET", RequestURI: "/empty", Host: addr, Close: true},
		},
	}
	for _, tt := range tests {
		// each case twice: the excerpt is kept only when the task asks
		for _, keep := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keep_excerpt=%v", tt.name, keep), func(t *testing.T) {
				before := hits.Load()
				task := tt.task
				task.Address, task.KeepExcerpt = addr, keep
				r := probeHTTP(testCtx(t, 500*time.Millisecond), task)
				require.Equal(t, Response, r.Outcome, "detail: %s", r.Detail)
				require.NotNil(t, r.HTTP)
				assert.True(t, r.Connected)
				assert.Equal(t, addr, r.Peer)
				assert.Empty(t, r.Detail)
				assert.Equal(t, tt.status, r.HTTP.Status)
				assert.Equal(t, tt.trunc, r.HTTP.Truncated)
				assert.Nil(t, r.HTTP.JSONKeys, "only with InspectJSON")
				assert.False(t, r.HTTP.DiffLike)
				if tt.body != nil {
					assert.Equal(t, int64(len(tt.body)), r.HTTP.BodyBytes)
					assert.Equal(t, sha(tt.body), r.HTTP.BodySHA256)
					if keep {
						assert.Equal(t, tt.excerpt, r.HTTP.Excerpt)
					}
				}
				if !keep {
					assert.Empty(t, r.HTTP.Excerpt, "no body byte kept by default")
				}
				if tt.header != nil {
					assert.Equal(t, tt.header, r.HTTP.Header)
				}
				assert.NotContains(t, r.HTTP.Header, "X-Secret")
				assert.Equal(t, tt.seen, <-got)
				assert.Equal(t, before+1, hits.Load(), "exactly one request")
				if tt.status == 302 {
					assert.Equal(t, "http://192.0.2.1/elsewhere", r.HTTP.Header["Location"])
				}
			})
		}
	}
}

// TestProbeHTTPExactRequest checks the bytes on the wire.
func TestProbeHTTPExactRequest(t *testing.T) {
	got := make(chan string, 1)
	addr := rawTCP(t, func(c net.Conn) {
		head := readHead(c)
		body := make([]byte, 5)
		io.ReadFull(c, body)
		got <- head + string(body)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	})
	r := probeHTTP(testCtx(t, 500*time.Millisecond), Task{
		Address: addr, Method: "PUT", Target: "http://192.0.2.1:80/x?y=1",
		Header: map[string]string{"X-B": "2", "X-A": "1"}, Body: "hello",
	})
	require.Equal(t, Response, r.Outcome, r.Detail)
	assert.Equal(t, "PUT http://192.0.2.1:80/x?y=1 HTTP/1.1\r\n"+
		"Host: "+addr+"\r\nX-A: 1\r\nX-B: 2\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello", <-got)
}

func TestProbeHTTPConnect(t *testing.T) {
	tests := []struct {
		name   string
		reply  string
		status int
	}{
		{"tunnel established", "HTTP/1.1 200 Connection established\r\n\r\n", 200},
		{"proxy refuses", "HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: 1000000\r\n\r\n<html>", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := make(chan string, 1)
			addr := rawTCP(t, func(c net.Conn) {
				line <- readHead(c)
				io.WriteString(c, tt.reply)
				// a tunnel (or an endless body) stays open: the probe must
				// not wait for it
				for i := 0; i < 100; i++ {
					if _, err := io.WriteString(c, "tunnel bytes "); err != nil {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
			start := time.Now()
			r := probeHTTP(testCtx(t, 500*time.Millisecond), Task{Address: addr, Method: "CONNECT", Target: "192.0.2.1:443"})
			assert.Less(t, time.Since(start), 250*time.Millisecond, "the body is never read")
			require.Equal(t, Response, r.Outcome, r.Detail)
			assert.True(t, r.Connected)
			assert.Equal(t, tt.status, r.HTTP.Status)
			assert.Zero(t, r.HTTP.BodyBytes)
			assert.Empty(t, r.HTTP.BodySHA256)
			assert.Empty(t, r.HTTP.Excerpt)
			assert.True(t, strings.HasPrefix(<-line, "CONNECT 192.0.2.1:443 HTTP/1.1\r\nHost: "+addr+"\r\n"))
		})
	}
}

// TestProbeHTTPHostile covers peers that misbehave: each costs at most one
// timeout.
func TestProbeHTTPHostile(t *testing.T) {
	const timeout = 400 * time.Millisecond
	endless := func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n")
		chunk := bytes.Repeat([]byte("x"), 4096)
		for {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}
	trickle := func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
		for {
			if _, err := io.WriteString(c, "1\r\nx\r\n"); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	hugeLength := func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 4294967296\r\n\r\nsome data")
		io.Copy(io.Discard, c) // stall until the probe gives up
	}
	shortLength := func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly 10 b.")
	}
	garbage := func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "SSH-2.0-OpenSSH_9.6 secret\r\n")
	}
	garbageStall := func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "\x00\x01\x02")
		io.Copy(io.Discard, c)
	}
	silent := func(c net.Conn) {
		readHead(c)
		io.Copy(io.Discard, c)
	}
	slowHeaders := func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nServer: x")
		io.Copy(io.Discard, c)
	}
	closes := func(c net.Conn) { readHead(c) }
	resets := func(c net.Conn) {
		readHead(c)
		c.(*net.TCPConn).SetLinger(0) // close sends RST
	}
	cutShort := func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n")
	}
	cutMidLine := func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Le")
	}
	hugeHeader := func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: ")
		io.WriteString(c, strings.Repeat("a", 2*maxHeaderBytes))
		io.Copy(io.Discard, c)
	}

	tests := []struct {
		name      string
		handle    func(net.Conn)
		maxBytes  int64
		want      Outcome
		detail    string // substring
		trunc     bool
		bodyBytes int64
		slow      bool // costs the one timeout
	}{
		{"endless body", endless, 4096, Response, "", true, 4096, false},
		{"endless body, default bound", endless, 0, Response, "", true, DefaultMaxBytes, false},
		{"slow endless body", trickle, 0, Response, "body read timed out", true, -1, true},
		{"4 GB content-length then stall", hugeLength, 0, Response, "body read timed out", true, 9, true},
		{"content-length longer than the body", shortLength, 0, Response, "body: unexpected EOF", false, 10, false},
		{"not HTTP", garbage, 0, Error, "not an HTTP response", false, 0, false},
		{"not HTTP, then silent", garbageStall, 0, Error, "not an HTTP response", false, 0, true},
		{"silent after accept", silent, 0, Timeout, "read response: timed out", false, 0, true},
		{"headers never end", slowHeaders, 0, Timeout, "read response: timed out", false, 0, true},
		{"closed without a response", closes, 0, Closed, "closed", false, 0, false},
		{"reset without a response", resets, 0, Closed, "closed", false, 0, false},
		{"cut short in the headers", cutShort, 0, Error, "cut short", false, 0, false},
		{"cut short in a header line", cutMidLine, 0, Error, "invalid HTTP response: malformed MIME header", false, 0, false},
		{"header over 64 KiB", hugeHeader, 0, Error, "response header exceeds", false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := rawTCP(t, tt.handle)
			start := time.Now()
			r := probeHTTP(testCtx(t, timeout), Task{Address: addr, Target: "/", MaxBytes: tt.maxBytes})
			took := time.Since(start)
			assert.Less(t, took, timeout+300*time.Millisecond, "one timeout at most")
			if !tt.slow {
				assert.Less(t, took, timeout*3/4, "no timeout spent")
			}
			require.Equal(t, tt.want, r.Outcome, "detail: %s", r.Detail)
			assert.True(t, r.Connected, "the dial succeeded, whatever came after")
			assert.Contains(t, r.Detail, tt.detail)
			assert.NotContains(t, r.Detail, "secret", "peer bytes stay out of Detail")
			assert.NotContains(t, r.Detail, "SSH")
			if tt.want != Response {
				assert.Nil(t, r.HTTP)
				return
			}
			assert.Equal(t, 200, r.HTTP.Status)
			assert.Equal(t, tt.trunc, r.HTTP.Truncated)
			if tt.bodyBytes >= 0 {
				assert.Equal(t, tt.bodyBytes, r.HTTP.BodyBytes)
			} else {
				assert.Positive(t, r.HTTP.BodyBytes)
			}
			assert.Len(t, r.HTTP.BodySHA256, 64)
		})
	}
}

func TestProbeHTTPDial(t *testing.T) {
	r := probeHTTP(testCtx(t, 300*time.Millisecond), Task{Address: closedTCPPort(t)})
	assert.Equal(t, Refused, r.Outcome)
	assert.False(t, r.Connected, "nothing listening")
	assert.True(t, strings.HasPrefix(r.Detail, "dial: "), r.Detail)
	assert.Nil(t, r.HTTP)
}

// TestProbeHTTPBadTask: a task that could inject lines or break the framing
// is an Error and sends nothing.
func TestProbeHTTPBadTask(t *testing.T) {
	var accepted atomic.Int64
	addr := rawTCP(t, func(net.Conn) { accepted.Add(1) })
	tests := []struct {
		name   string
		task   Task
		detail string
	}{
		{"no address", Task{}, "without an address"},
		{"method with space", Task{Address: addr, Method: "GET /x"}, "invalid method"},
		{"target with CRLF", Task{Address: addr, Target: "/\r\nX-Injected: 1"}, "invalid request target"},
		{"target with space", Task{Address: addr, Target: "/ HTTP/1.0"}, "invalid request target"},
		{"host with CRLF", Task{Address: addr, Host: "a\r\nb: c"}, "invalid host"},
		{"header name", Task{Address: addr, Header: map[string]string{"X A": "1"}}, "invalid header name"},
		{"header value CRLF", Task{Address: addr, Header: map[string]string{"X-A": "1\r\nX-B: 2"}}, "invalid value"},
		{"reserved header", Task{Address: addr, Header: map[string]string{"content-length": "5"}}, "set by the probe"},
		{"connection header", Task{Address: addr, Header: map[string]string{"Connection": "keep-alive"}}, "set by the probe"},
		{"CONNECT without target", Task{Address: addr, Method: "CONNECT"}, "needs a target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := probeHTTP(testCtx(t, 300*time.Millisecond), tt.task)
			assert.Equal(t, Error, r.Outcome)
			assert.False(t, r.Connected, "nothing dialled")
			assert.Contains(t, r.Detail, tt.detail)
		})
	}
	assert.Zero(t, accepted.Load())
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		name string
		head []byte
		cut  bool
		want string
	}{
		{"empty", nil, false, ""},
		{"text", []byte("a\tb\r\n"), false, "a\tb\r\n"},
		{"split rune at the cut", []byte("ab\xc3"), true, "ab"},
		{"split rune without cut is binary", []byte("ab\xc3"), false, "(binary)"},
		{"invalid utf-8", []byte("\xff\xfe"), true, "(binary)"},
		{"nul", []byte("a\x00b"), false, "(binary)"},
		{"del", []byte("a\x7f"), false, "(binary)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, excerpt(tt.head, tt.cut))
		})
	}
}

func TestLooksHTTP(t *testing.T) {
	for in, want := range map[string]bool{"HTTP/1.1 ": true, "HTT": true, "H": true, "http/": false, "SSH-": false, "\x00": false} {
		assert.Equal(t, want, looksHTTP([]byte(in)), fmt.Sprintf("%q", in))
	}
}

// TestProbeHTTPInspectJSON: keys and the diff check come from the body as
// read, never from more than MaxBytes of it, and no body byte is kept.
func TestProbeHTTPInspectJSON(t *testing.T) {
	leak := `{"diff":` + fmt.Sprintf("%q", patch) + `}`
	late := `{"pad":"` + strings.Repeat("x", 100) + `","diff":` + fmt.Sprintf("%q", patch) + `}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/reference/patch":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, leak)
		case "/late":
			io.WriteString(w, late)
		case "/forbidden":
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"error":"endpoint is only available on the admin socket"}`)
		case "/project":
			io.WriteString(w, `{"project":{"name":"p"},"report":{"poc":["a"]},"scripts":[{"name":"build","body":"make"}]}`)
		case "/text-diff":
			io.WriteString(w, patch)
		case "/text":
			io.WriteString(w, "hello")
		}
	}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	tests := []struct {
		name     string
		target   string
		maxBytes int64
		keys     []string
		diff     bool
		detail   string // "" means empty
		trunc    bool
	}{
		{"leaked reference patch", "/reference/patch", 0, []string{"diff"}, true, "", false},
		{"403 error object", "/forbidden", 0, []string{"error"}, false, "", false},
		{"public view", "/project", 0, []string{"project", "project.name", "report", "report.poc", "scripts", "scripts[].body", "scripts[].name"}, false, "", false},
		{"plain diff body", "/text-diff", 0, nil, true, "", false},
		{"plain text", "/text", 0, nil, false, "", false},
		{"patch cut by MaxBytes, header kept", "/reference/patch", 30, []string{"diff"}, true, "json: body truncated after 30 bytes, keys may be partial", true},
		{"diff beyond MaxBytes is not seen", "/late", 100, []string{"pad"}, false, "json: body truncated after 100 bytes, keys may be partial", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := probeHTTP(testCtx(t, time.Second), Task{Address: addr, Target: tt.target, InspectJSON: true, MaxBytes: tt.maxBytes})
			require.Equal(t, Response, r.Outcome, r.Detail)
			assert.True(t, r.Connected)
			assert.Equal(t, tt.keys, r.HTTP.JSONKeys)
			assert.Equal(t, tt.diff, r.HTTP.DiffLike)
			assert.Equal(t, tt.detail, r.Detail)
			assert.Equal(t, tt.trunc, r.HTTP.Truncated)
			assert.Empty(t, r.HTTP.Excerpt, "no excerpt unless asked")
			assert.NotContains(t, r.Detail, "diff --git")
			if tt.maxBytes > 0 {
				assert.Equal(t, tt.maxBytes, r.HTTP.BodyBytes)
			}
		})
	}
}

// TestProbeHTTPInspectJSONEndless: an endless or stalled JSON body is
// inspected as far as it was read.
func TestProbeHTTPInspectJSONEndless(t *testing.T) {
	endless := rawTCP(t, func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
		io.WriteString(c, `{"a":{"b":1},"list":[`)
		for {
			if _, err := io.WriteString(c, `{"x":"y"},`); err != nil {
				return
			}
		}
	})
	const cut = `{"diff":"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-`
	stalled := rawTCP(t, func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
		io.WriteString(c, cut)
		io.Copy(io.Discard, c)
	})
	t.Run("endless", func(t *testing.T) {
		r := probeHTTP(testCtx(t, time.Second), Task{Address: endless, InspectJSON: true, MaxBytes: 4096})
		require.Equal(t, Response, r.Outcome, r.Detail)
		assert.True(t, r.HTTP.Truncated)
		assert.Equal(t, int64(4096), r.HTTP.BodyBytes)
		assert.Equal(t, []string{"a", "a.b", "list", "list[].x"}, r.HTTP.JSONKeys)
		assert.False(t, r.HTTP.DiffLike)
		assert.Contains(t, r.Detail, "truncated")
	})
	t.Run("stalled mid-patch", func(t *testing.T) {
		r := probeHTTP(testCtx(t, 300*time.Millisecond), Task{Address: stalled, InspectJSON: true})
		require.Equal(t, Response, r.Outcome, r.Detail)
		assert.True(t, r.HTTP.Truncated)
		assert.Equal(t, []string{"diff"}, r.HTTP.JSONKeys)
		assert.True(t, r.HTTP.DiffLike)
		assert.Equal(t, int64(len(cut)), r.HTTP.BodyBytes)
		assert.Equal(t, fmt.Sprintf("body read timed out; json: body truncated after %d bytes, keys may be partial", len(cut)), r.Detail)
	})
}

// fuzzMethods are the methods FuzzHTTPResponse asks with (flags>>2&3).
var fuzzMethods = [4]string{"GET", "HEAD", "CONNECT", "POST"}

// serveBytes runs the HTTP exchange of task against an in-memory peer
// (net.Pipe) that reads the whole request, sends data and closes.
func serveBytes(t *testing.T, task Task, data []byte) Result {
	t.Helper()
	req, method, err := buildRequest(task)
	require.NoError(t, err)
	client, server := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer server.Close()
		if _, err := io.ReadFull(server, make([]byte, len(req))); err != nil {
			return
		}
		server.Write(data)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := exchangeHTTP(ctx, client, task, req, method, Result{Peer: task.Address, Connected: true})
	client.Close()
	<-done
	return r
}

// FuzzHTTPResponse serves raw bytes to the HTTP probe's response reader
// with a small MaxBytes. Whatever the peer sends: no panic, a known
// outcome, never more than MaxBytes of body, no excerpt unless asked, and
// what was read agrees with net/http reading the same bytes.
func FuzzHTTPResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world",
		"HTTP/1.1 200 OK\r\n\r\n" + strings.Repeat("x", 200),
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nsecret trailer line\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"HTTP/1.1 200 Connection established\r\n\r\ntunnel bytes",
		"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n\r\n" + `{"error":"admin only","diff":"diff --git a/x b/x\n"}`,
		"HTTP/1.1 302 Found\r\nLocation: http://192.0.2.1/\r\nServer: " + strings.Repeat("s", 600) + "\r\n\r\n",
		"HTTP/1.0 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nab\xc3",
		"HTTP/1.1 200 OK\r\n\r\n\x00\x01\xff",
		"HTTP/1.1 999 X\r\n\r\n",
		"HTTP/1.1 abc\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: secret\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: secret\r\n\r\n",
		"HTTP/9.9 200 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nsecret header line\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + `{"a":{"b":[{"c":1}]},"d":"--- x\n+++ y\n"}`,
		"HTTP/1.1 200 OK\r\nContent-Le",
		"HTTP/1.1 200 OK\r\nX: \"secret\"\r\n bad continuation\r\n\r\n",
		"SSH-2.0-OpenSSH_9.6 secret\r\n",
		"HTT",
		"\x00\x01\x02",
		"",
	} {
		f.Add([]byte(s), uint8(16), uint8(0))
		f.Add([]byte(s), uint8(3), uint8(1|2))  // excerpt and json inspection
		f.Add([]byte(s), uint8(63), uint8(1|2)) // the same, more body
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n"+strings.Repeat("y", 64)), uint8(63), uint8(1))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), uint8(0), uint8(1<<2)) // HEAD
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n"), uint8(0), uint8(2<<2|1))                         // CONNECT
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nbody"), uint8(7), uint8(3<<2|1))

	f.Fuzz(func(t *testing.T, data []byte, maxByte, flags uint8) {
		max := int64(maxByte%64) + 1
		task := Task{
			Address: "192.0.2.1:80", Method: fuzzMethods[flags>>2&3], Target: "/x",
			KeepExcerpt: flags&1 != 0, InspectJSON: flags&2 != 0, MaxBytes: max,
		}
		if task.Method == "CONNECT" {
			task.Target = "192.0.2.1:443"
		}
		r := serveBytes(t, task, data)

		require.True(t, knownOutcomes[r.Outcome], "unknown outcome %q", r.Outcome)
		require.Contains(t, []Outcome{Response, Closed, Error}, r.Outcome, "the peer closed: no timeout (detail %q)", r.Detail)
		require.True(t, r.Connected)
		require.LessOrEqual(t, len(r.Detail), maxDetail+3)
		// peer bytes stay out of Detail: net/http and textproto quote
		// them or put them after a colon, and errCategory cuts there
		for i := 0; i < len(r.Detail); i++ {
			require.True(t, r.Detail[i] >= ' ' && r.Detail[i] < 0x7f, "Detail is printable ASCII, no peer bytes: %q", r.Detail)
		}
		require.NotContains(t, r.Detail, `"`, "no quoted peer bytes")
		require.NotContains(t, r.Detail, "secret", "no peer bytes")
		if r.Outcome != Response {
			require.Nil(t, r.HTTP)
			return
		}
		h := r.HTTP
		require.NotNil(t, h)
		require.LessOrEqual(t, h.BodyBytes, max, "never more than MaxBytes of body")
		require.GreaterOrEqual(t, h.BodyBytes, int64(0))
		if !task.KeepExcerpt {
			require.Empty(t, h.Excerpt, "no body byte kept unless asked")
		}
		require.LessOrEqual(t, len(h.Excerpt), excerptBytes)
		if !task.InspectJSON {
			require.Nil(t, h.JSONKeys)
			require.False(t, h.DiffLike)
		}
		for k, v := range h.Header {
			require.Contains(t, keptHeaders, k)
			require.LessOrEqual(t, len(v), maxHeaderValue)
		}

		// net/http reading the same bytes is the reference
		ref, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), &http.Request{Method: task.Method})
		require.NoError(t, err, "the probe read a response net/http does not")
		require.Equal(t, ref.StatusCode, h.Status)
		if task.Method == "CONNECT" {
			require.Zero(t, h.BodyBytes)
			require.Empty(t, h.BodySHA256)
			require.Empty(t, h.Excerpt)
			return
		}
		body, bodyErr := io.ReadAll(io.LimitReader(ref.Body, max+1))
		if int64(len(body)) > max {
			bodyErr = nil // an error past the bound is not the probe's to see
		}
		require.GreaterOrEqual(t, int64(len(body)), h.BodyBytes)
		read := body[:h.BodyBytes]
		require.Equal(t, sha(read), h.BodySHA256, "the hash is of the body's first bytes")
		if task.KeepExcerpt && h.Excerpt != binaryExcerpt {
			require.True(t, strings.HasPrefix(string(read), h.Excerpt), "the excerpt is a prefix of the body")
		}
		if task.InspectJSON {
			in := inspectJSON(read)
			require.Equal(t, in.Keys, h.JSONKeys, "keys of the bytes read only")
			require.Equal(t, in.DiffLike, h.DiffLike)
		}
		if strings.HasPrefix(r.Detail, "body") {
			require.False(t, bodyErr == nil && int64(len(body)) <= max, "a body error net/http does not see")
			return
		}
		require.NoError(t, bodyErr, "net/http saw a body error the probe did not")
		require.Equal(t, min(int64(len(body)), max), h.BodyBytes)
		require.Equal(t, int64(len(body)) > max, h.Truncated)
	})
}
