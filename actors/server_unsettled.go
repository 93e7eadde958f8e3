package actors

import (
	"maps"

	"github.com/mcprt/mcprt/messages"
)

// What the port still owes. The port answers every Send with exactly one
// OpResult, before the connection's ConnClosed when the request was sent
// while the connection was up, and every Dial with exactly one DialResult,
// also after Dialing.Cancel. A request sent after the port had already
// posted the ConnClosed (the actor could not know: the ConnClosed was still
// in its mailbox) is answered NotSent after it, and a dial given up on (its
// startup deadline passed, shutdown cancelled it) is answered after the
// actor forgot it. The server actor keeps both until their outcome arrives,
// so that
//
//   - at ConnClosed, a request of that generation still waiting is known
//     never to have been written: it moves to a new connection as a NotSent
//     one would (connClosed), instead of failing as if the server had seen
//     it;
//   - shutdown waits for those outcomes as it waits for ConnClosed, so
//     Close never returns with an outcome (or a dial's child process) still
//     on its way (seeds 66071 and 15389).
//
// A crashed incarnation hands what is owed to the next one with its
// closing connections (serverRecord.handOver); the root posts again an
// OpResult whose handling crashed, and an aborted DialResult for one that
// did, so nothing is waited for forever.
type owed struct {
	sends map[messages.OpID]uint64 // request id → generation
	dials map[uint64]bool          // generations dialed, DialResult not in
}

// merge adds o2 to o.
func (o *owed) merge(o2 owed) {
	if len(o2.sends) > 0 {
		if o.sends == nil {
			o.sends = map[messages.OpID]uint64{}
		}
		maps.Copy(o.sends, o2.sends)
	}
	if len(o2.dials) > 0 {
		if o.dials == nil {
			o.dials = map[uint64]bool{}
		}
		maps.Copy(o.dials, o2.dials)
	}
}

// sent records a request just sent on generation gen.
func (s *serverActor) sent(id messages.OpID, gen uint64) {
	if s.owed.sends == nil {
		s.owed.sends = map[messages.OpID]uint64{}
	}
	s.owed.sends[id] = gen
}

// settle records the outcome of request id.
func (s *serverActor) settle(id messages.OpID) { delete(s.owed.sends, id) }

// dialing records a dial of generation gen just started.
func (s *serverActor) dialing(gen uint64) {
	if s.owed.dials == nil {
		s.owed.dials = map[uint64]bool{}
	}
	s.owed.dials[gen] = true
}

// unsettledOn reports whether request id, sent on gen, has no outcome yet.
func (s *serverActor) unsettledOn(id messages.OpID, gen uint64) bool {
	g, ok := s.owed.sends[id]
	return ok && g == gen
}

// stillOwed reports whether a dial's outcome, or a request's outcome whose
// connection's ConnClosed has already arrived, is still on its way.
func (s *serverActor) stillOwed() bool {
	if len(s.owed.dials) > 0 {
		return true
	}
	for _, gen := range s.owed.sends {
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
