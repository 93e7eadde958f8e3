package actors

import (
	"encoding/json"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/extension"
	"github.com/mcprt/mcprt/messages"
)

// sessionCmd carries a command for a session's actor through its server
// actor, which forwards it while the session is bound and refuses it
// otherwise: a session's actor never receives a command after it stopped.
type sessionCmd struct {
	id     uint64 // the handle's number for it (Session.take)
	pid    *actor.PID
	cmd    any
	refuse func(why string)
}

// Fail refuses the command (the server actor could not forward it).
func (c *sessionCmd) Fail(err *messages.Error) { c.refuse(err.Message) }

// The commands a session's actor takes.
type (
	sessRequest struct {
		token  messages.Token
		method string
		params json.RawMessage
		reply  func(messages.Reply)
	}
	sessAbort struct{ token messages.Token }
	sessOpen  struct {
		stream  *Stream
		method  string // "" for an observer
		params  json.RawMessage
		handler Handler
		// deferred, instead of handler, takes the frame and calls done
		// once it is fully handled (the frame's credit returns then).
		deferred func(method string, params json.RawMessage, done func()) error
		methods  []string // routed notifications (stream) or watched ones (observer)
	}
	sessClose struct{}
	// unbound acknowledges unbind: the server forwards nothing more.
	unbound struct{}
	// requestDone and streamDone report finished work to the session.
	requestDone struct{ token messages.Token }
	streamDone  struct{ token messages.Token }
)

// sessionActor runs one protocol session; decisions come from
// extension.Session. Its streams and observers are its children.
type sessionActor struct {
	env      *env
	server   *actor.PID
	h        *Session
	gen      uint64
	me       *actor.PID
	st       extension.Session
	released bool // the server forwards nothing more
	children map[messages.Token]*actor.PID
	handles  map[messages.Token]*Stream // the children's handles
	crash    crashNote
}

func newSessionActor(e *env, server *actor.PID, h *Session, gen uint64) actor.Producer {
	return func() actor.Actor {
		return &sessionActor{env: e, server: server, h: h, gen: gen, children: map[messages.Token]*actor.PID{}, handles: map[messages.Token]*Stream{}}
	}
}

func (a *sessionActor) Receive(c actor.Context) {
	msg := c.Message()
	defer func() {
		if r := recover(); r != nil {
			a.crash.note(r)
			panic(r) // supervised: endOnCrash ends the session (Stopping)
		}
	}()
	a.env.maybeCrash(messages.ActorSession, msg)
	if cmd, ok := msg.(*sessionCmd); ok {
		if !a.h.take(cmd.id) {
			return // refused already: the session ended while it was on the way
		}
		msg = cmd.cmd
	}
	switch m := msg.(type) {
	case *actor.Started:
		a.me = c.Self()
	case sessRequest:
		if why := a.st.Refusal(); why != "" {
			m.reply(a.h.notSent(why))
			return
		}
		a.st.Request(uint64(m.token))
		me, reply := a.me, m.reply
		a.env.send(a.server, &messages.Request{Token: m.token, Gen: a.gen, Method: m.method, Params: m.params,
			Deadline: messages.DeadlineCall, Origin: messages.OriginInternal,
			Reply: func(r messages.Reply) {
				reply(r)
				a.env.send(me, requestDone{m.token})
			}})
	case sessAbort:
		a.env.send(a.server, &messages.Abort{Token: m.token})
	case requestDone:
		a.st.RequestDone(uint64(m.token))
	case sessOpen:
		if why := a.st.Refusal(); why != "" {
			m.stream.refused(why)
			return
		}
		a.st.Stream(uint64(m.stream.token))
		prefix := "stream"
		if m.method == "" {
			prefix = "observer"
		}
		a.children[m.stream.token] = c.SpawnPrefix(a.env.props(newStreamActor(a.env, a.server, a.me, a.gen, m)), prefix)
		a.handles[m.stream.token] = m.stream
	case streamDone:
		delete(a.children, m.token)
		delete(a.handles, m.token)
		a.exec(c, a.st.StreamDone(uint64(m.token)))
	case sessClose:
		a.exec(c, a.st.Close())
	case unbound:
		a.released = true
		a.maybeStop(c)
	case bindingEnded:
		a.released = true
		a.exec(c, a.st.ConnEnded(m.why))
		a.maybeStop(c)
	case *actor.Stopping:
		if a.crash.reason != nil {
			// This actor crashed and the policy ended it: its streams and
			// observers end with the reason, the server forgets it.
			why := "the protocol session's actor crashed (" + crashText(a.crash.reason) + ")"
			for _, h := range a.handles {
				h.lost.Store(&why)
			}
			a.h.abandon(why)
			a.env.send(a.server, unbind{pid: a.me})
			return
		}
		// The server actor is stopping (shutdown, crash): children stop with
		// it and end themselves; the companion hears through Done.
		a.h.abandon("the server's actor stopped")
	}
}

func (a *sessionActor) exec(c actor.Context, effects []extension.SessionEffect) {
	for _, e := range effects {
		switch e := e.(type) {
		case extension.AbortRequest:
			a.env.send(a.server, &messages.Abort{Token: messages.Token(e.ID)})
		case extension.CancelStream:
			if p := a.children[messages.Token(e.ID)]; p != nil {
				a.env.send(p, cancelStream{})
			}
		case extension.LoseStream:
			if p := a.children[messages.Token(e.ID)]; p != nil {
				a.env.send(p, bindingEnded{why: e.Why})
			}
		case extension.SignalDone:
			why := a.st.Refusal()
			a.h.signalDone(why)
		case extension.Unbind:
			a.env.send(a.server, unbind{pid: a.me})
		case extension.StopSession:
			a.maybeStop(c)
		}
	}
}

// maybeStop stops the actor once the server forwards nothing more and no
// stream or observer of it is open.
func (a *sessionActor) maybeStop(c actor.Context) {
	if a.released && len(a.children) == 0 && (a.st.Closed() || a.st.Ended()) {
		c.Stop(a.me)
	}
}
