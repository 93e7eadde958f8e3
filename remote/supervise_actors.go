package remote

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// The three remote actor kinds under supervision (supervise.go): their
// props, their supervision strategies and their own handling of a crash.

// gatewayProps are the gateway's: under a guardian deciding its crashes,
// deciding its session actors' crashes itself.
func (s *Server) gatewayProps() *actor.Props {
	return inlineProps(func() actor.Actor { return &gatewayActor{srv: s} },
		actor.WithGuardian(&gatewayStrategy{s: s}), actor.WithSupervisor(&sessionStrategy{s: s}),
		actor.WithReceiverMiddleware(s.sup.guard(messages.ActorGateway, s.gatewayCrashed)))
}

// sessionProps are an attached session's actor's.
func (s *Server) sessionProps(sa *sessionActor) *actor.Props {
	return inlineProps(func() actor.Actor { return sa },
		actor.WithReceiverMiddleware(s.sup.guard(messages.ActorAttachedSession, sessionCrashed)))
}

// gatewayStrategy decides the gateway's crashes: it is resumed after the
// delay (the policy never ends it), its sessions untouched.
type gatewayStrategy struct{ s *Server }

func (g *gatewayStrategy) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	d := g.s.sup.decide(messages.ActorGateway, child.Id, "the shared runtime's gateway (it takes the attaches)", reason)
	g.s.sup.resumeAfter(sup, child, d.Delay)
}

// gatewayCrashed takes the attach the gateway crashed on once more; when
// that crashes too, the attaching process is answered with an error.
func (s *Server) gatewayCrashed(_ actor.ReceiverContext, msg any, retried bool, reason any) bool {
	if !retried {
		return true
	}
	if m, ok := wireMessage(msg, s.logger).(*attachMsg); ok && m.Client.Address != "" && m.Client.ID != "" {
		err := messages.Errorf(messages.KindInternal, "", "the shared runtime's gateway crashed twice taking this attach (%s); try again", crashText(reason))
		if serr := s.sendTo(m.Client.pid(), &attachedMsg{Nonce: m.Nonce, Err: toWireErr(err)}); serr != nil {
			s.logger.Warn("remote: answering an attach", "err", serr)
		}
	}
	return false
}

// sessionStrategy decides an attached session's actor's crashes: the
// policy ends it, and it is resumed to end its session (sessionEnd) with
// its crash as the reason: its calls answered once, its leases and
// subscriptions released, its process told.
type sessionStrategy struct{ s *Server }

func (st *sessionStrategy) HandleFailure(sys *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	sv := st.s.sup
	d := sv.decide(messages.ActorAttachedSession, child.Id, fmt.Sprintf("attached session %s's actor", child.Id), reason)
	if d.Action == supervisor.CrashRestart {
		sv.resumeAfter(sup, child, d.Delay)
		return
	}
	sys.Root.Send(child, sessionEnd{why: crashWhy(reason)})
	sup.ResumeChildren(child)
}

// crashWhy is the end reason of a session whose actor crashed.
func crashWhy(reason any) string {
	return fmt.Sprintf("its actor crashed (%s)", crashText(reason))
}

// sessionCrashed notes the crash in the session actor, which ends its
// session before it takes anything else. A call's outcome is taken again,
// so its goroutine's end is seen and a subscription it made is released.
func sessionCrashed(c actor.ReceiverContext, msg any, retried bool, reason any) bool {
	a, ok := c.Actor().(*sessionActor)
	if !ok {
		return false
	}
	if a.crashed == "" {
		a.crashed = crashWhy(reason)
	}
	m, isDone := msg.(callDone)
	if isDone && retried {
		a.forget(m) // crashed twice: what it made is released, no answer
	}
	return isDone
}

// receiverProps are the receiver's: under a guardian deciding its crashes.
func (s *Session) receiverProps() *actor.Props {
	return inlineProps(func() actor.Actor { return &receiver{s: s} },
		actor.WithGuardian(&receiverStrategy{s: s}),
		actor.WithReceiverMiddleware(s.sup.guard(messages.ActorReceiver, s.receiverCrashed)))
}

// receiverStrategy decides the receiver's crashes: it is resumed after
// the delay with the session's state (replies that came meanwhile wait in
// its mailbox); when its crashes exhaust the policy the session fails
// (every caller answered once, later calls refused) and detaches, so the
// member releases what it held.
type receiverStrategy struct{ s *Session }

func (r *receiverStrategy) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	s := r.s
	d := s.sup.decide(messages.ActorReceiver, child.Id, "this session's receiver (it takes the shared runtime's answers)", reason)
	if d.Action == supervisor.CrashRestart {
		s.sup.resumeAfter(sup, child, d.Delay)
		return
	}
	s.mu.Lock()
	attached := s.gone == nil && s.session != nil
	s.mu.Unlock()
	if attached && s.link != nil {
		_ = s.link.send(s.session, detachMsg{})
	}
	s.fail(messages.Errorf(messages.KindDisconnected, "", "this session's receiver crashed %d times within %s (%s); the session has ended",
		d.Recent, s.sup.policy.Restart.Window, crashText(reason)))
	sup.StopChildren(child)
}

// receiverCrashed takes the message the receiver crashed on once more,
// unless the host's callback took it (a delivery is never handed to the
// host twice); when it crashes again, a caller waiting for it is answered
// with an error.
func (s *Session) receiverCrashed(_ actor.ReceiverContext, msg any, retried bool, reason any) bool {
	if _, host := reason.(hostPanic); host {
		return false
	}
	if !retried {
		return true
	}
	err := toWireErr(messages.Errorf(messages.KindInternal, "", "this session's receiver crashed twice taking this answer (%s); its outcome is unknown", crashText(reason)))
	switch m := wireMessage(msg, s.logger).(type) {
	case *replyMsg:
		s.answer(&replyMsg{ID: m.ID, Err: err})
	case *attachedMsg:
		select {
		case s.attached <- &attachedMsg{Nonce: m.Nonce, Err: err}:
		default:
		}
	case *endedMsg:
		if m.Err != nil {
			s.fail(m.Err.toError())
		}
	case *askMsg:
		if m.ID != 0 && s.link != nil && s.session != nil {
			_ = s.link.send(s.session, &answerMsg{ID: m.ID, Err: err})
		}
	}
	return false
}
