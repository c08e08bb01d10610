package probes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// timeoutErr is a net.Error that says it timed out, as some resolvers return.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "synthetic timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// opErr wraps errno the way net.Dial does: OpError -> SyscallError -> Errno.
func opErr(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: errno}}
}

func TestClassifyNetError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Outcome
	}{
		{"nil", nil, Connected},
		{"refused (RST, ICMP port unreachable)", opErr("dial", syscall.ECONNREFUSED), Refused},
		{"refused on udp read", opErr("read", syscall.ECONNREFUSED), Refused},
		{"refused wrapped again", fmt.Errorf("dns: %w", opErr("read", syscall.ECONNREFUSED)), Refused},
		{"host unreachable (docker >= 25 reject)", opErr("dial", syscall.EHOSTUNREACH), Unreachable},
		{"net unreachable", opErr("dial", syscall.ENETUNREACH), Unreachable},
		{"host down", opErr("dial", syscall.EHOSTDOWN), Unreachable},
		{"eperm (iptables OUTPUT reject)", opErr("dial", syscall.EPERM), Unreachable},
		{"eacces", opErr("dial", syscall.EACCES), Unreachable},
		{"no route to host as text", errors.New("dial tcp 10.0.0.1:80: connect: no route to host"), Unreachable},
		{"deadline (docker 20.10 drop)", &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}, Timeout},
		{"context deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), Timeout},
		{"net.Error timeout", timeoutErr{}, Timeout},
		{"dns lookup timeout", &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, Timeout},
		{"dns lookup not found", &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, Error},
		{"reset", opErr("read", syscall.ECONNRESET), Error},
		{"eof", io.EOF, Error},
		{"cancelled", context.Canceled, Error},
		{"other", errors.New("boom"), Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, classifyNetError(tt.err))
		})
	}
}

func TestClip(t *testing.T) {
	assert.Equal(t, "short", clip("short"))
	long := string(make([]byte, 1000))
	assert.Len(t, clip(long), maxDetail+3)
}
