package probes

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// LimitWriter keeps the first n bytes written to it and drops the rest,
// always reporting success: a peer that talks too much cannot block or fail
// the reader, only be cut.
type LimitWriter struct {
	w io.Writer
	n int64
}

// NewLimitWriter keeps at most n bytes of what is written, in w.
func NewLimitWriter(w io.Writer, n int64) *LimitWriter { return &LimitWriter{w: w, n: n} }

func (l *LimitWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return len(p), nil
	}
	k := min(int64(len(p)), l.n)
	n, err := l.w.Write(p[:k])
	l.n -= int64(n)
	if err != nil {
		return n, err
	}
	return len(p), nil
}

// ReadAtMost reads all of r if it holds at most max bytes, and fails
// otherwise: everything a container or a run wrote is read this way, so a
// peer that talks too much costs max+1 bytes, never more.
func ReadAtMost(r io.Reader, max int64) ([]byte, error) {
	if max <= 0 {
		return nil, errors.New("max must be positive")
	}
	limit := max
	if limit < math.MaxInt64 {
		limit++ // one byte more tells "too long" from "exactly max"
	}
	data, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("more than %d bytes", max)
	}
	return data, nil
}
