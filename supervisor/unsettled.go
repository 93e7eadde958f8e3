package supervisor

import "github.com/mcprt/mcprt/messages"

// Unsettled sends. The port answers every Send with exactly one OpResult,
// before the connection's ConnClosed when the request went out while the
// connection was up. A request sent after the port had already posted the
// ConnClosed (the actor could not know: the ConnClosed was still in its
// mailbox) is answered NotSent after it. The Server keeps every send until
// its OpResult arrives, so that
//
//   - at ConnClosed, a request of that generation still waiting is known
//     never to have been written: it moves to a new connection as a NotSent
//     one would, instead of failing as if the server had seen it;
//   - a shutdown waits for those late outcomes as it waits for ConnClosed,
//     so Close never returns with an outcome still on its way (seed 66071).
//
// A crashed instance hands its unsettled sends to the next one (Handover),
// and the root posts again an OpResult whose handling crashed, so none is
// waited for forever.

// Sent reports that the actor executed the Send of request id on gen: its
// outcome is a later input. It is told after the port's Send returned, so a
// Send that panicked (a crash) leaves nothing to wait for.
func (s *Server) Sent(id messages.OpID, gen uint64) { s.unsettled[id] = gen }

// Handover is what a crashed instance leaves its successor beyond its
// closing connections: its failure memory and its unsettled sends.
type Handover struct {
	Memory    Memory
	Unsettled map[messages.OpID]uint64
}

// Handover returns what this instance leaves a successor; the actor takes
// it after Crash.
func (s *Server) Handover() Handover {
	u := make(map[messages.OpID]uint64, len(s.unsettled))
	for id, g := range s.unsettled {
		u[id] = g
	}
	return Handover{Memory: s.life.Memory(), Unsettled: u}
}

// unsettledOn reports whether request id, sent on gen, has no outcome yet.
func (s *Server) unsettledOn(id messages.OpID, gen uint64) bool {
	g, ok := s.unsettled[id]
	return ok && g == gen
}

// lateOutcomes reports whether an outcome is still on its way for a
// request whose connection's ConnClosed has already arrived.
func (s *Server) lateOutcomes() bool {
	for _, gen := range s.unsettled {
		if !s.open[gen] {
			return true
		}
	}
	return false
}

// movable reports whether o may go out again on another connection after
// its connection ended before it was written: not a health check or a
// refresh's own listing (which moves as a whole refresh), not a request
// pinned to its generation, not too often, not after Shutdown.
func (s *Server) movable(o *op) bool {
	return o.kind != opHealth && o.cmd() != nil && !o.pinned && o.resends < MaxResends && !s.closed
}
