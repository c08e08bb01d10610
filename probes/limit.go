package probes

import "io"

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
