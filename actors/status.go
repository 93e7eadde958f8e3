package actors

import (
	"sync"
	"time"

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

// statusKey is what a change of which is worth publishing: not the lease
// count, which moves with every call.
type statusKey struct {
	state     messages.ServerState
	tools     int
	gen       uint64
	failedAt  time.Time
	lastErr   *messages.Error
	catErr    *messages.Error
	restarts  int
	instr     string
	published bool
}

// publish puts the server's status on the board when it changed.
func (s *serverActor) publish() {
	if s.life == nil {
		return
	}
	now := s.now()
	state := s.life.State(now)
	if s.closed {
		state = messages.StateClosed
	}
	key := statusKey{state, s.tools, s.life.Gen(), s.life.FailedAt(now), s.life.LastError(), s.catErr, s.restarts, s.info.Instructions, true}
	if key == s.published {
		return
	}
	s.published = key
	st := s.status()
	st.Leases = 0
	b := s.env.board
	b.mu.Lock()
	b.byName[st.Name] = st
	b.mu.Unlock()
	if b.onChange != nil {
		b.onChange()
	}
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
