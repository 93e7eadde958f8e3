package actors

import "github.com/mcprt/mcprt/messages"

// Unsettled sends. The port answers every Send with exactly one OpResult,
// before the connection's ConnClosed when the request was sent while the
// connection was up. A request sent after the port had already posted the
// ConnClosed (the actor could not know: the ConnClosed was still in its
// mailbox) is answered NotSent after it. The server actor keeps every
// send until its OpResult arrives, so that
//
//   - at ConnClosed, a request of that generation still waiting is known
//     never to have been written: it moves to a new connection as a NotSent
//     one would (connClosed), instead of failing as if the server had seen
//     it;
//   - shutdown waits for those late outcomes as it waits for ConnClosed,
//     so Close never returns with an outcome still on its way (seed 66071).
//
// A crashed incarnation hands its unsettled sends to the next one with its
// closing connections (serverRecord.handOver), and the root posts again an
// OpResult whose handling crashed, so none is waited for forever.

// sent records a request just sent on generation gen.
func (s *serverActor) sent(id messages.OpID, gen uint64) {
	if s.unsettled == nil {
		s.unsettled = map[messages.OpID]uint64{}
	}
	s.unsettled[id] = gen
}

// settle records the outcome of request id.
func (s *serverActor) settle(id messages.OpID) { delete(s.unsettled, id) }

// unsettledOn reports whether request id, sent on gen, has no outcome yet.
func (s *serverActor) unsettledOn(id messages.OpID, gen uint64) bool {
	g, ok := s.unsettled[id]
	return ok && g == gen
}

// lateOutcomes reports whether an outcome is still on its way for a
// request whose connection's ConnClosed has already arrived.
func (s *serverActor) lateOutcomes() bool {
	for _, gen := range s.unsettled {
		if _, open := s.conns[gen]; !open {
			return true
		}
	}
	return false
}

// movable reports whether o may go out again on another connection after
// its connection ended before it was written (as opDone does for NotSent).
func (s *serverActor) movable(o *op) bool {
	return o.kind != opHealth && o.cmd != nil && !o.pinned && o.resends < maxResends && !s.closed
}
