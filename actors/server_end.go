package actors

import (
	"github.com/mcprt/mcprt/messages"
	"maps"
	"slices"
)

// shutdown stops taking work, fails what is pending and closes every
// connection; reply runs once the last ConnClosed has arrived.
func (s *serverActor) shutdown(reply func()) {
	if s.closed {
		if s.stopping == nil {
			reply()
		}
		return
	}
	s.closed = true
	s.stopping = reply
	err := messages.Errorf(messages.KindShutdown, s.cfg.Name, "the runtime is shutting down")
	for _, o := range s.sortedOps() {
		if c := s.conns[o.gen]; c != nil {
			c.Cancel(o.id)
		}
		s.finish(o, nil, err)
	}
	s.exec(s.life.Shutdown())
	if s.dialGen != 0 && s.dial != nil {
		s.dial.Cancel()
	}
	s.maybeStopped()
}

// maybeStopped completes a shutdown once nothing is open or dialing.
func (s *serverActor) maybeStopped() {
	if s.stopping == nil || len(s.conns) > 0 || s.dialGen != 0 || s.stillOwed() {
		return
	}
	s.stopTimers()
	reply := s.stopping
	s.stopping = func() {}
	reply()
}

// crashed runs in the crashed instance before protoactor replaces it: every
// caller hears (once: the command whose handling panicked is answered by
// the root supervisor instead), every connection and dial is released,
// every timer stops. The new instance starts with fresh state and a new
// incarnation number, so late traffic for this one is recognised and
// dropped.
func (s *serverActor) crashed() {
	if s.life == nil {
		return
	}
	s.rec.remember(s.life.Memory())
	err := messages.Errorf(messages.KindInternal, s.cfg.Name, "the server's actor crashed and was restarted; the operation's outcome is unknown")
	if r := s.refresh; r != nil {
		s.refresh = nil
		for _, w := range r.waiters {
			w.reply(err)
		}
	}
	for _, w := range s.moving {
		w.reply(err)
	}
	s.moving = nil
	ws := s.waiters
	s.waiters = nil
	for _, w := range ws {
		if s.handling == nil || w.cmd != s.handling {
			w.fail(err)
		}
	}
	for _, o := range s.sortedOps() {
		if c := s.conns[o.gen]; c != nil {
			c.Cancel(o.id)
		}
		if o.kind == opHealth || (s.handling != nil && o.cmd == s.handling) {
			delete(s.ops, o.id)
			continue
		}
		s.finishQuiet(o, err)
	}
	s.stopTimers()
	if s.dial != nil {
		s.dial.Cancel()
	}
	if s.slotGen != 0 {
		s.env.send(s.env.root, releaseSlot{pid: s.me, gen: s.slotGen})
	}
	for _, gen := range slices.Sorted(maps.Keys(s.conns)) { // in order: replayable
		s.conns[gen].Close()
	}
	s.rec.handOver(s.conns, s.owed) // the next incarnation waits for their ConnClosed and outcomes
	if s.stopping != nil {
		s.stopping()
	}
}

// finishQuiet answers o's caller without touching the lifecycle (used while
// the instance is being discarded).
func (s *serverActor) finishQuiet(o *op, err *messages.Error) {
	delete(s.ops, o.id)
	switch o.kind {
	case opRequest:
		o.reply(messages.Reply{Err: err, Gen: o.gen})
	case opList:
		o.listReply(messages.ListReply{Err: err, Gen: o.gen})
	}
}

func (s *serverActor) status() messages.ServerStatus {
	now := s.now()
	st := messages.ServerStatus{
		Name:             s.cfg.Name,
		State:            s.life.State(now),
		Lifecycle:        s.cfg.Policy.Mode.String(),
		Transport:        s.info.Transport,
		ProtocolVersion:  s.info.ProtocolVersion,
		Generation:       s.life.Gen(),
		ToolCount:        s.tools,
		Leases:           s.life.Leases(),
		FailedAt:         s.life.FailedAt(now),
		LastError:        s.life.LastError(),
		Instructions:     s.info.Instructions,
		Restarts:         s.restarts,
		LateFrames:       s.ext.late,
		UnknownResponses: s.ext.unknown,
	}
	if s.catErr != nil && s.life.Connected(s.catErrGen) {
		st.CatalogError = s.catErr
	}
	if s.closed {
		st.State = messages.StateClosed
	}
	return st
}
