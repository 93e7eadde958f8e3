package supervisor

import (
	"time"

	"github.com/mcprt/mcprt/messages"
)

// Shutdown stops taking work, fails what is pending and closes every
// connection; Stopped follows once the last one has ended and no dial is
// left. A second Shutdown does nothing.
func (s *Server) Shutdown(now time.Time) []Effect {
	s.input(now)
	if s.closed {
		return s.out
	}
	s.closed, s.stopping = true, true
	err := s.shutdownErr()
	for _, o := range s.sortedOps() {
		s.emit(Cancel{Gen: o.gen, ID: o.id})
		s.finish(o, nil, err)
	}
	s.run(s.life.Shutdown())
	if s.dialGen != 0 {
		s.emit(CancelDial{Gen: s.dialGen})
	}
	s.maybeStopped()
	return s.out
}

// maybeStopped completes a shutdown once nothing is open or dialing and no
// outcome is on its way for a connection that has ended.
func (s *Server) maybeStopped() {
	if !s.stopping || len(s.open) > 0 || s.dialGen != 0 || s.stillOwed() {
		return
	}
	s.stopping = false // stopped once
	s.dl.slot.Disarm()
	s.emit(Stopped{})
}

// Crash is the last input of an instance whose actor crashed (panicked)
// while handling the command handling (nil: none): every caller hears
// that the outcome is unknown, except handling's, which the root
// supervisor answers (so nobody hears twice); every operation is
// cancelled, the dial cancelled, the start slot returned and every open
// connection closed. The next instance takes over its Handover.
func (s *Server) Crash(now time.Time, handling messages.Failable) []Effect {
	s.input(now)
	err := messages.Errorf(messages.KindInternal, s.cfg.Name, "the server's actor crashed and was restarted; the operation's outcome is unknown")
	if r := s.cat.run; r != nil {
		s.cat.run = nil
		s.answerAll(r.waiters, err)
	}
	s.answerAll(s.cat.moving, err)
	s.cat.moving = nil
	ws := s.waiters
	s.waiters = nil
	for i := range ws {
		if handling == nil || ws[i].match != handling {
			s.fail(&ws[i], err)
		}
	}
	for _, o := range s.sortedOps() {
		s.emit(Cancel{Gen: o.gen, ID: o.id})
		delete(s.ops, o.id)
		if o.kind == opHealth || (handling != nil && o.cmd() == handling) {
			continue
		}
		switch {
		case o.req != nil:
			s.emit(Reply{To: o.req, Reply: messages.Reply{Err: err, Gen: o.gen}})
		case o.list != nil:
			s.emit(ListReply{To: o.list, Reply: messages.ListReply{Err: err, Gen: o.gen}})
		}
	}
	if s.dialGen != 0 {
		s.emit(CancelDial{Gen: s.dialGen})
	}
	if s.slotGen != 0 {
		s.emit(ReleaseSlot{Gen: s.slotGen})
	}
	for _, g := range s.OpenGens() {
		s.emit(CloseConn{Gen: g})
	}
	return s.out
}
