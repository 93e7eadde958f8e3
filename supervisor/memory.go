package supervisor

import (
	"time"

	"github.com/mcprt/mcprt/messages"
)

// Memory is what a lifecycle remembers of recent failures: the failed
// connect that failure memory answers server_backoff for, the last error,
// and how far the keep-alive reconnect backoff has gone. It outlives the
// lifecycle: a server actor that crashes keeps it with its record, and the
// restarted actor's new lifecycle takes it back (Remember), so a crash
// does not reset failure memory or the reconnect backoff.
type Memory struct {
	// FailedAt is when the remembered connect failed (zero: none).
	FailedAt time.Time
	// LastErr is the last connect or connection error.
	LastErr *messages.Error
	// Attempts counts the reconnects since the connection was last healthy.
	Attempts int
}

// Memory returns what the lifecycle remembers of recent failures.
func (l *Lifecycle) Memory() Memory {
	return Memory{FailedAt: l.failedAt, LastErr: l.lastErr, Attempts: l.attempts}
}

// Remember takes back a Memory of an earlier lifecycle of the same server.
// It is called on a new lifecycle, before Start.
func (l *Lifecycle) Remember(m Memory) {
	l.failedAt, l.lastErr = m.FailedAt, m.LastErr
	l.attempts = m.Attempts
	l.backoff.Reset()
	for i := 1; i < m.Attempts; i++ { // the first reconnect has no delay (nextDelay)
		l.backoff.NextBackOff()
	}
}
