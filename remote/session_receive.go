package remote

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// receiver is this process's end of the session: replies, deliveries
// and notices from the member.
type receiver struct{ s *Session }

func (r *receiver) Receive(ctx actor.Context) {
	s := r.s
	if l, ok := ctx.Message().(typedLost); ok {
		s.loseTyped(l.err)
		return
	}
	msg := wireMessage(ctx.Message(), s.logger)
	if msg != nil {
		s.heardNow()
	}
	switch m := msg.(type) {
	case *attachedMsg:
		select {
		case s.attached <- m:
		default:
		}
	case *replyMsg:
		s.answer(m)
	case *endedMsg:
		if m.Err != nil {
			s.fail(m.Err.toError())
		}
	case *deliverMsg:
		// A panic of the host's is this receiver's crash (supervise.go).
		s.callHost(func(h mcprt.Host) { h.Deliver(context.Background(), m.Message) })
	case *notifyMsg:
		s.callHost(func(h mcprt.Host) { h.Notify(context.Background(), m.Notice) })
	case *askMsg:
		s.serveAsk(m)
	case *askCancelMsg:
		s.withdrawAsk(m.ID)
	case *protoEventMsg:
		s.protoEvent(m) // protocol.go
	case *typedMsg:
		s.deliverTyped(m)
	}
}

func (s *Session) callHost(f func(mcprt.Host)) {
	if s.host == nil {
		return
	}
	s.hostMu.Lock()
	defer s.hostMu.Unlock()
	s.typed.busy.Add(1) // a typed subscription's Stop from here cannot wait
	defer s.typed.busy.Add(-1)
	defer asHostPanic()
	f(s.host)
}

// notifyHost hands a notice of this process's own to the host.
func (s *Session) notifyHost(n messages.Notice) {
	s.callHost(func(h mcprt.Host) { h.Notify(context.Background(), n) })
}
