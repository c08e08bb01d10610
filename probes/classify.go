package probes

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
)

// classifyNetError maps a dial/read/write error to an outcome. The kinds are
// kept apart because engines differ: Docker 20.10 drops blocked traffic (a
// timeout), Docker >= 25 rejects it at once (unreachable or refused).
func classifyNetError(err error) Outcome {
	switch {
	case err == nil:
		return Connected
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.EHOSTDOWN),
		errors.Is(err, syscall.ENETDOWN),
		// iptables REJECT/DROP in OUTPUT and seccomp/LSM denials surface as these
		errors.Is(err, syscall.EPERM),
		errors.Is(err, syscall.EACCES),
		strings.Contains(err.Error(), "no route to host"),
		strings.Contains(err.Error(), "network is unreachable"):
		return Unreachable
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return Timeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Timeout
	}
	return Error
}

// maxDetail bounds error texts: some quote bytes a peer sent.
const maxDetail = 256

// clip shortens s to at most maxDetail bytes.
func clip(s string) string {
	if len(s) <= maxDetail {
		return s
	}
	return s[:maxDetail] + "..."
}
