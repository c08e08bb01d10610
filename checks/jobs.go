package checks

import (
	"context"
	"net"
	"sync"
)

// runJobs runs jobs on workers goroutines that take them in order, so the
// first job starts first; every other job waits for headStart to close (or
// ctx to end). Results come back in the jobs' order.
func runJobs[T any](ctx context.Context, jobs []func() T, workers int, headStart <-chan struct{}) []T {
	results := make([]T, len(jobs))
	next := make(chan int, len(jobs))
	for i := range jobs {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(max(workers, 1), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				if i > 0 {
					select {
					case <-headStart:
					case <-ctx.Done():
					}
				}
				results[i] = jobs[i]()
			}
		})
	}
	wg.Wait()
	return results
}

// familyOf says "ipv6" for an IPv6 address or host:port, else "ipv4".
func familyOf(addr string) string {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return "ipv6"
	}
	return "ipv4"
}
