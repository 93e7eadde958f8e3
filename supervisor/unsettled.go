package supervisor

import "github.com/mcprt/mcprt/messages"

// Unsettled sends. The port answers every Send with exactly one OpResult,
// before the connection's ConnClosed when the request was sent while the
// connection was up. A request sent after the port had already posted the
// ConnClosed (the actor could not know: the ConnClosed was still in its
// mailbox) is answered NotSent after it. The Server keeps every send the
// port took (Sent) until its OpResult arrives, so that
//
//   - at ConnClosed, a request of that generation still waiting is known
//     never to have been written: it moves to a new connection as a NotSent
//     one would, instead of failing as if the server had seen it;
//   - shutdown waits for those late outcomes as it waits for ConnClosed,
//     so Close never returns with an outcome still on its way (seed 66071).
//
// A crashed instance hands its unsettled sends to the next one (Legacy),
// and the root posts again an OpResult whose handling crashed, so none is
// waited for forever.

// Sent records that the port took request id on generation gen. The actor
// calls it right after Conn.Send returned, while executing the Send effect
// (a Send that panicked sent nothing to wait for); it returns no effects.
func (s *Server) Sent(id messages.OpID, gen uint64) {
	if s.unsettled == nil {
		s.unsettled = map[messages.OpID]uint64{}
	}
	s.unsettled[id] = gen
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
// its connection ended before it was written.
func (s *Server) movable(o *op) bool {
	return o.kind != opHealth && o.cmd() != nil && !o.pinned && o.resends < MaxResends && !s.closed
}
