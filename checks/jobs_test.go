package checks

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRunJobs(t *testing.T) {
	headStart := make(chan struct{})
	var mu sync.Mutex
	var order []int
	var running, most atomic.Int32
	jobs := make([]func() int, 10)
	for i := range jobs {
		jobs[i] = func() int {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if i == 0 {
				time.Sleep(50 * time.Millisecond) // the others wait for its head start
				close(headStart)
			}
			time.Sleep(10 * time.Millisecond)
			return i * i
		}
	}
	var got []int
	done := make(chan struct{})
	go func() { got = runJobs(context.Background(), jobs, 3, headStart); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the jobs never finished: the one the others wait for did not start first")
	}
	assert.Equal(t, []int{0, 1, 4, 9, 16, 25, 36, 49, 64, 81}, got, "results in the jobs' order")
	assert.Equal(t, 0, order[0], "the first job starts first")
	assert.LessOrEqual(t, most.Load(), int32(3), "at most workers at once")
	assert.Greater(t, most.Load(), int32(1), "in parallel once the head start is over")

	// An ended context releases the waiting jobs, which still run (to
	// report themselves as interrupted).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := runJobs(ctx, []func() bool{func() bool { return true }, func() bool { return true }}, 2, make(chan struct{}))
	assert.Equal(t, []bool{true, true}, ran)
}
