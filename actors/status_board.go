package actors

import (
	"sync"

	"github.com/mcprt/mcprt/messages"
)

// statusBoard holds every server's last published status, so that status
// can be read without a message round trip (and without connecting
// anything), and so that a watcher hears about every change.
type statusBoard struct {
	mu sync.Mutex
	// byName is guarded by mu.
	byName map[string]messages.ServerStatus

	onChange func() // called after every change, outside mu; set before any actor runs
}

// Statuses returns every server's last published status, in configuration
// order, without asking the actors: it is instant and never connects
// anything. Leases are not tracked here (see Status).
func (s *System) Statuses() []messages.ServerStatus {
	b := s.env.board
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]messages.ServerStatus, len(s.names))
	for i, n := range s.names {
		out[i] = b.byName[n]
		if s.closing.Load() {
			out[i].State = messages.StateClosed
		}
	}
	return out
}
