package supervisor

import (
	"maps"

	"github.com/mcprt/mcprt/messages"
)

// What the port still owes. The port answers every Send with exactly one
// OpResult, before the connection's ConnClosed when the request went out
// while the connection was up, and every Dial with exactly one DialResult,
// also after it was cancelled. A request sent after the port had already
// posted the ConnClosed (the actor could not know: the ConnClosed was
// still in its mailbox) is answered NotSent after it, and a dial given up
// on (its startup deadline passed, shutdown cancelled it) is answered after
// the Server forgot it. The Server keeps both until their outcome arrives,
// so that
//
//   - at ConnClosed, a request of that generation still waiting is known
//     never to have been written: it moves to a new connection as a NotSent
//     one would, instead of failing as if the server had seen it;
//   - a shutdown waits for those outcomes as it waits for ConnClosed, so
//     Close never returns with an outcome (or a dial's child process) still
//     on its way (seeds 66071 and 15389).
//
// A crashed instance hands what is owed to the next one (Handover); the
// root posts again an OpResult whose handling crashed, and an aborted
// DialResult for one that did, so nothing is waited for forever.

// owed is what the port has still to answer.
type owed struct {
	sends map[messages.OpID]uint64 // request id → generation
	dials map[uint64]bool          // generations dialed, DialResult not in
}

// Sent reports that the actor executed the Send of request id on gen: its
// outcome is a later input. It is told after the port's Send returned, so a
// Send that panicked (a crash) leaves nothing to wait for.
func (s *Server) Sent(id messages.OpID, gen uint64) { s.owed.sends[id] = gen }

// Dialing reports that the actor executed the StartDial of gen, after the
// port's Dial returned: its DialResult is a later input.
func (s *Server) Dialing(gen uint64) { s.owed.dials[gen] = true }

// Handover is what a crashed instance leaves its successor beyond its
// closing connections: its failure memory and its unsettled sends.
type Handover struct {
	Memory Memory
	// Sends are the requests sent whose OpResult had not arrived (id →
	// generation), Dials the generations whose DialResult had not.
	Sends map[messages.OpID]uint64
	Dials map[uint64]bool
}

// Handover returns what this instance leaves a successor; the actor takes
// it after Crash.
func (s *Server) Handover() Handover {
	return Handover{Memory: s.life.Memory(), Sends: maps.Clone(s.owed.sends), Dials: maps.Clone(s.owed.dials)}
}

// unsettledOn reports whether request id, sent on gen, has no outcome yet.
func (s *Server) unsettledOn(id messages.OpID, gen uint64) bool {
	g, ok := s.owed.sends[id]
	return ok && g == gen
}

// stillOwed reports whether a dial's outcome, or a request's outcome whose
// connection's ConnClosed has already arrived, is still on its way.
func (s *Server) stillOwed() bool {
	if len(s.owed.dials) > 0 {
		return true
	}
	for _, gen := range s.owed.sends {
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
