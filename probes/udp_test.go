package probes

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestProbeUDP(t *testing.T) {
	echo, echoGot := udpServer(t, func(p []byte) []byte { return p })
	silent, silentGot := udpServer(t, func([]byte) []byte { return nil })

	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	t.Cleanup(cancel)

	tests := []struct {
		name    string
		ctx     context.Context
		task    Task
		want    Outcome
		got     <-chan []byte // what the server must have received
		payload []byte
	}{
		{"reply, default payload", nil, Task{Address: echo}, Connected, echoGot, []byte{0}},
		{"reply, given payload", nil, Task{Address: echo, Payload: []byte("ping")}, Connected, echoGot, []byte("ping")},
		{"no reply", nil, Task{Address: silent}, Timeout, silentGot, []byte{0}},
		{"port unreachable", nil, Task{Address: closedUDPPort(t)}, Refused, nil, nil},
		{"expired deadline", expired, Task{Address: echo}, Timeout, nil, nil},
		{"no address", nil, Task{}, Error, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = testCtx(t, 300*time.Millisecond)
			}
			start := time.Now()
			r := probeUDP(ctx, tt.task)
			assert.Equal(t, tt.want, r.Outcome, "detail: %s", r.Detail)
			assert.Less(t, time.Since(start), time.Second)
			if tt.got != nil {
				select {
				case p := <-tt.got:
					assert.Equal(t, tt.payload, p)
				case <-time.After(time.Second):
					t.Fatal("server received nothing")
				}
			}
		})
	}
}
