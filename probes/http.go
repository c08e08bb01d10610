package probes

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"net"
	"net/http"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

const (
	maxHeaderBytes = 64 << 10 // bound on status line + headers
	excerptBytes   = 256
	maxHeaderValue = 512
	binaryExcerpt  = "(binary)"
)

// keptHeaders are the only response headers reported.
var keptHeaders = []string{"Content-Type", "Location", "Server", "Content-Length"}

// probeHTTP writes one raw HTTP/1.1 request on a fresh connection and
// summarises the response. It is raw (no http.Client) so that the request
// line goes out exactly as written (absolute-URI GET, CONNECT) and nothing is
// ever followed or retried. Peer bytes never go into Detail: a response may
// be a secret.
func probeHTTP(ctx context.Context, t Task) Result {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	r := Result{Peer: t.Address}
	req, method, err := buildRequest(t)
	if err != nil {
		r.Outcome, r.Detail = Error, clip(err.Error())
		return r
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", t.Address)
	if err != nil {
		r.Outcome, r.Detail = classifyNetError(err), clip("dial: "+err.Error())
		return r
	}
	defer conn.Close()
	r.Connected = true // whatever follows, something accepted the connection
	return exchangeHTTP(ctx, conn, t, req, method, r)
}

// exchangeHTTP writes req on conn and reads and summarises the response
// into r, all under ctx's deadline (a cancelled ctx ends it at once). It
// is the part of probeHTTP that reads what the peer sends; the caller
// dials and closes conn.
func exchangeHTTP(ctx context.Context, conn net.Conn, t Task, req []byte, method string, r Result) Result {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	// one deadline for the whole exchange; a cancelled parent ends it at once
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		r.Outcome, r.Detail = Error, clip(err.Error())
		return r
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if _, err := conn.Write(req); err != nil {
		r.Outcome, r.Detail = classifyNetError(err), clip("write request: "+err.Error())
		return r
	}

	rec := &prefixReader{R: conn}
	lim := &io.LimitedReader{R: rec, N: maxHeaderBytes}
	resp, err := http.ReadResponse(bufio.NewReader(lim), &http.Request{Method: method})
	if err != nil {
		r.Outcome, r.Detail = classifyResponseError(err, rec, lim.N == 0)
		return r
	}
	h := &HTTPResult{Status: resp.StatusCode, Header: pickHeaders(resp.Header)}
	r.Outcome, r.HTTP = Response, h
	if method == http.MethodConnect {
		// after a 2xx the connection is a tunnel: there is no body to read
		return r
	}

	lim.N = math.MaxInt64 // from here the body bound below applies
	max := t.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	s := &bodySummary{h: sha256.New()}
	if t.InspectJSON {
		s.keep = min(max, maxInspectBytes)
	}
	n, err := io.Copy(s, io.LimitReader(resp.Body, max))
	if err == nil && n == max {
		// the bound was reached: one more byte tells whether there was more
		var one [1]byte
		k, err2 := io.ReadFull(resp.Body, one[:])
		switch {
		case k > 0:
			h.Truncated = true
		case err2 != nil && !errors.Is(err2, io.EOF):
			err = err2
		}
	}
	if err != nil {
		if classifyNetError(err) == Timeout {
			// it answered: the outcome stays Response, with what was read
			h.Truncated = true
			r.Detail = "body read timed out"
		} else {
			r.Detail = clip("body: " + errCategory(err))
		}
	}
	h.BodyBytes = s.n
	h.BodySHA256 = hex.EncodeToString(s.h.Sum(nil))
	if t.KeepExcerpt {
		h.Excerpt = excerpt(s.head, h.Truncated || s.n > int64(len(s.head)))
	}
	if t.InspectJSON {
		incomplete := h.Truncated || err != nil || s.n > int64(len(s.body))
		r.Detail = joinDetail(r.Detail, inspectBody(h, s.body, incomplete))
	}
	return r
}

// inspectBody fills JSONKeys and DiffLike from body and returns a note for
// Detail (never peer bytes), only when the body was not read whole:
// incomplete says body is not the whole body. A complete body adds no
// note, JSON or not (the host reads a non-empty Detail as "not within
// bounds").
func inspectBody(h *HTTPResult, body []byte, incomplete bool) string {
	in := inspectJSON(body)
	h.JSONKeys, h.DiffLike = in.Keys, in.DiffLike
	switch {
	case incomplete && in.Partial:
		return fmt.Sprintf("json: body truncated after %d bytes, keys may be partial", len(body))
	case incomplete:
		return fmt.Sprintf("json: body truncated after %d bytes", len(body))
	}
	return ""
}

// joinDetail joins two Detail notes with "; ", skipping empty ones.
func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return clip(a + "; " + b)
}

// classifyResponseError tells a silent or closing peer from one that sent
// something that is not HTTP.
func classifyResponseError(err error, rec *prefixReader, headerFull bool) (Outcome, string) {
	got := rec.n
	switch {
	case headerFull:
		return Error, fmt.Sprintf("response header exceeds %d bytes", maxHeaderBytes)
	case got > 0 && !looksHTTP(rec.prefix[:min(got, int64(len(rec.prefix)))]):
		return Error, fmt.Sprintf("not an HTTP response (%d bytes received)", got)
	case got == 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)):
		return Closed, "connection closed without a response"
	case classifyNetError(err) == Timeout:
		return Timeout, fmt.Sprintf("read response: timed out (%d bytes received)", got)
	case got > 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)):
		return Error, fmt.Sprintf("response cut short after %d bytes", got)
	}
	return Error, clip("invalid HTTP response: " + errCategory(err))
}

// looksHTTP reports whether p can be the start of "HTTP/".
func looksHTTP(p []byte) bool {
	const want = "HTTP/"
	if len(p) > len(want) {
		p = p[:len(want)]
	}
	return strings.HasPrefix(want, string(p))
}

// errCategory drops the part of an error text that quotes peer bytes
// (net/http and textproto append the offending line).
func errCategory(err error) string {
	s := err.Error()
	if i := strings.IndexAny(s, "\":"); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// buildRequest renders the request, refusing anything that would let a
// task inject extra lines or break the framing the probe sets itself.
func buildRequest(t Task) ([]byte, string, error) {
	if t.Address == "" {
		return nil, "", errors.New("http task without an address")
	}
	method := t.Method
	if method == "" {
		method = http.MethodGet
	}
	if !isToken(method) {
		return nil, "", fmt.Errorf("invalid method %q", method)
	}
	target := t.Target
	if target == "" {
		if method == http.MethodConnect {
			return nil, "", errors.New("CONNECT needs a target")
		}
		target = "/"
	}
	if !isVisible(target) {
		return nil, "", fmt.Errorf("invalid request target %q", target)
	}
	host := t.Host
	if host == "" {
		host = t.Address
	}
	if !isVisible(host) {
		return nil, "", fmt.Errorf("invalid host %q", host)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, host)
	keys := make([]string, 0, len(t.Header))
	for k := range t.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := t.Header[k]
		if !isToken(k) {
			return nil, "", fmt.Errorf("invalid header name %q", k)
		}
		switch textproto.CanonicalMIMEHeaderKey(k) {
		case "Host", "Content-Length", "Connection", "Transfer-Encoding":
			return nil, "", fmt.Errorf("header %s is set by the probe", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, "", fmt.Errorf("invalid value for header %s", k)
		}
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	if t.Body != "" {
		b.WriteString("Content-Length: " + strconv.Itoa(len(t.Body)) + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	b.WriteString(t.Body)
	return b.Bytes(), method, nil
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// isVisible reports whether s is non-empty and has no space or control byte.
func isVisible(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	return true
}

func pickHeaders(h http.Header) map[string]string {
	var out map[string]string
	for _, k := range keptHeaders {
		v := h.Get(k)
		if v == "" {
			continue
		}
		if out == nil {
			out = make(map[string]string)
		}
		if len(v) > maxHeaderValue {
			v = v[:maxHeaderValue]
		}
		out[k] = v
	}
	return out
}

// excerpt returns head if it is printable UTF-8 text, else "(binary)".
// cut says head is a prefix of a longer body, so a rune may be split at its end.
func excerpt(head []byte, cut bool) string {
	if len(head) == 0 {
		return ""
	}
	if cut && !utf8.Valid(head) {
		for i := 1; i <= utf8.UTFMax-1 && i < len(head); i++ {
			if utf8.Valid(head[:len(head)-i]) {
				head = head[:len(head)-i]
				break
			}
		}
	}
	if !utf8.Valid(head) {
		return binaryExcerpt
	}
	for _, c := range head {
		// control bytes (NUL, ESC, ...) would garble whoever renders it
		if c < ' ' && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return binaryExcerpt
		}
	}
	return string(head)
}

// bodySummary hashes and counts what is written and keeps its first bytes
// (excerptBytes for the excerpt, keep for the JSON inspection).
type bodySummary struct {
	h    hash.Hash
	n    int64
	head []byte
	keep int64
	body []byte
}

func (s *bodySummary) Write(p []byte) (int, error) {
	if room := excerptBytes - len(s.head); room > 0 {
		s.head = append(s.head, p[:min(room, len(p))]...)
	}
	if room := s.keep - int64(len(s.body)); room > 0 {
		s.body = append(s.body, p[:min(room, int64(len(p)))]...)
	}
	s.n += int64(len(p))
	return s.h.Write(p)
}

// prefixReader counts the bytes read and keeps the first few, so a peer
// that is not HTTP can be told from one that is silent.
type prefixReader struct {
	R      io.Reader
	n      int64
	prefix [8]byte
}

func (p *prefixReader) Read(b []byte) (int, error) {
	k, err := p.R.Read(b)
	if p.n < int64(len(p.prefix)) {
		copy(p.prefix[p.n:], b[:k])
	}
	p.n += int64(k)
	return k, err
}
