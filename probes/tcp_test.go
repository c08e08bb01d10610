package probes

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProbeTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	// the kernel completes the handshake into the backlog: no Accept needed

	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	t.Cleanup(cancel)

	tests := []struct {
		name string
		ctx  context.Context
		addr string
		want Outcome
	}{
		{"connected", testCtx(t, 300*time.Millisecond), ln.Addr().String(), Connected},
		{"refused", testCtx(t, 300*time.Millisecond), closedTCPPort(t), Refused},
		// a real drop needs a non-loopback peer; an expired deadline takes
		// the same path through the dialer
		{"timeout", expired, ln.Addr().String(), Timeout},
		{"no address", testCtx(t, 300*time.Millisecond), "", Error},
		{"no port", testCtx(t, 300*time.Millisecond), "127.0.0.1", Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := probeTCP(tt.ctx, Task{Address: tt.addr})
			assert.Equal(t, tt.want, r.Outcome, "detail: %s", r.Detail)
			assert.Equal(t, tt.addr, r.Peer)
			if tt.want != Connected {
				assert.NotEmpty(t, r.Detail)
			}
		})
	}
}
