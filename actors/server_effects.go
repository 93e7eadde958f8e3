package actors

import (
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// exec executes the core's effects in order.
func (s *serverActor) exec(effects []supervisor.Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case supervisor.Send:
			s.conns[e.Gen].Send(e.Op)
			s.core.Sent(e.Op.ID, e.Gen) // after Send: one that panicked sent nothing
		case supervisor.Reply:
			e.To.Reply(e.Reply)
		case supervisor.ListReply:
			e.To.Reply(e.Reply)
		case supervisor.Answer:
			e.To.Fail(e.Err)
		case supervisor.ConnectReply:
			e.To.Reply(messages.ConnectReply{Info: s.info, Gen: e.Gen})
		case supervisor.Cancel:
			if c := s.conns[e.Gen]; c != nil {
				c.Cancel(e.ID)
			}
		case supervisor.Arm:
			s.stopTimer(e.Kind)
			s.timers[e.Kind] = s.env.after(e.After, s.me, lifeTimer{incarnation: s.inc, kind: e.Kind, token: e.Token})
		case supervisor.Disarm:
			s.stopTimer(e.Kind)
		case supervisor.Dial:
			s.rec.noteGen(e.Gen)
			s.env.send(s.env.root, acquireSlot{pid: s.me, gen: e.Gen})
		case supervisor.StartDial:
			s.dial = s.env.dialer.Dial(messages.DialRequest{
				Server: s.cfg.Name, Gen: e.Gen, Endpoint: s.cfg.Endpoint,
				IDPrefix:   "mcprt-" + clock.HexID(s.env.rand, 6),
				ClientName: s.env.clientName, ClientVersion: s.env.clientVersion,
			}, s.env.sinkFor(s.me))
			s.core.Dialing(e.Gen) // after Dial: one that panicked owes no outcome
		case supervisor.ReleaseSlot:
			s.env.send(s.env.root, releaseSlot{pid: s.me, gen: e.Gen})
		case supervisor.CancelDial:
			if s.dial != nil {
				s.dial.Cancel()
			}
		case supervisor.CloseConn:
			if c := s.conns[e.Gen]; c != nil {
				c.Close()
			}
		case supervisor.Bind:
			s.bind(e.To.(*bindSession), e.Gen)
		case supervisor.Revive:
			s.rec.revive()
		case supervisor.Relist:
			s.env.send(s.me, relistRefresh{incarnation: s.inc})
		case supervisor.Stopped:
			s.stopTimers()
			reply := s.stopping
			s.stopping = func() {}
			reply()
		default:
			s.catalogEffect(e)
		}
	}
}

func (s *serverActor) stopTimer(kind supervisor.TimerKind) {
	if t := s.timers[kind]; t != nil {
		t.Stop()
		delete(s.timers, kind)
	}
}

func (s *serverActor) stopTimers() {
	for k := range s.timers {
		s.stopTimer(k)
	}
}
