package actors

import (
	"time"

	"github.com/mcprt/mcprt/messages"
)

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

func (s *serverActor) status() messages.ServerStatus {
	now := s.now()
	return messages.ServerStatus{
		Name:             s.cfg.Name,
		State:            s.core.State(now),
		Lifecycle:        s.cfg.Policy.Mode.String(),
		Transport:        s.info.Transport,
		ProtocolVersion:  s.info.ProtocolVersion,
		Generation:       s.core.Gen(),
		ToolCount:        s.tools,
		Leases:           s.core.Leases(),
		FailedAt:         s.core.FailedAt(now),
		LastError:        s.core.LastError(),
		CatalogError:     s.core.CatalogError(),
		Instructions:     s.info.Instructions,
		Restarts:         s.restarts,
		LateFrames:       s.ext.late,
		UnknownResponses: s.ext.unknown,
	}
}

// publish puts the server's status on the board when it changed.
func (s *serverActor) publish() {
	if s.core == nil {
		return
	}
	now := s.now()
	key := statusKey{s.core.State(now), s.tools, s.core.Gen(), s.core.FailedAt(now), s.core.LastError(), s.core.ListingError(), s.restarts, s.info.Instructions, true}
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
