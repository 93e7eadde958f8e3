package actors

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/extension"
	"github.com/mcprt/mcprt/messages"
)

// cancelStream asks a stream's actor to cancel it.
type cancelStream struct{}

// streamOutcome is a stream request's final reply.
type streamOutcome struct{ reply messages.Reply }

// streamActor runs one stream or notification observer of a session;
// decisions come from extension.Stream. The consumer's handler runs in
// this actor's turn.
type streamActor struct {
	env     *env
	server  *actor.PID
	session *actor.PID
	gen     uint64
	open    sessOpen
	h       *Stream
	me      *actor.PID
	st      extension.Stream
	// settled: the server holds nothing of it any more (the request's
	// outcome arrived, or the observer was removed).
	settled bool
	credits *messages.Credits // a stream's window (nil for an observer)
	crash   crashNote
}

func newStreamActor(e *env, server, session *actor.PID, gen uint64, open sessOpen) actor.Producer {
	return func() actor.Actor {
		return &streamActor{env: e, server: server, session: session, gen: gen, open: open, h: open.stream}
	}
}

func (a *streamActor) Receive(c actor.Context) {
	msg := c.Message()
	defer func() {
		if r := recover(); r != nil {
			a.crash.note(r)
			panic(r) // supervised: endOnCrash ends the stream (Stopping)
		}
	}()
	if a.open.method == "" {
		a.env.maybeCrash(messages.ActorObserver, msg)
	} else {
		a.env.maybeCrash(messages.ActorStream, msg)
	}
	switch m := msg.(type) {
	case *actor.Started:
		a.started(c)
	case messages.StreamSent:
		a.st.Sent()
		a.h.markSent()
	case messages.StreamNotification:
		a.h.markSent() // a frame implies the request was written
		if _, ended := a.st.Ended(); ended {
			a.release()
		}
		a.exec(c, a.st.Frame(m.Method, m.Params))
	case observerFrame:
		a.exec(c, a.st.Frame(m.method, m.params))
	case streamOutcome:
		a.settled = true
		a.exec(c, a.st.Outcome(extension.Outcome{Result: m.reply.Result, Err: m.reply.Err, ServerCancelled: m.reply.ServerCancelled}))
		a.maybeStop(c)
	case cancelStream:
		a.exec(c, a.st.Cancel())
	case bindingEnded:
		if a.open.method == "" {
			a.settled = true // the server removed the observer
		}
		a.exec(c, a.st.Lost(m.why))
		if !a.settled {
			a.env.send(a.server, &messages.Abort{Token: a.h.token}) // returns the lease now
		}
		a.maybeStop(c)
	case *actor.Stopping:
		switch why := a.h.lost.Load(); {
		case a.crash.reason != nil: // it crashed; the policy ended it
			a.exec(c, a.st.Crashed("the stream's actor crashed ("+crashText(a.crash.reason)+")"))
		case why != nil: // its session's actor crashed
			a.exec(c, a.st.Crashed(*why))
		default: // its session or server actor is stopping (shutdown, crash)
			a.exec(c, a.st.Cancel())
		}
	}
}

func (a *streamActor) started(c actor.Context) {
	a.me = c.Self()
	a.h.pid.Store(a.me)
	if a.h.cancelled.Load() {
		// Cancelled before anything was sent: nothing goes on the wire.
		a.settled = true
		a.exec(c, a.st.Cancel())
		a.maybeStop(c)
		return
	}
	if a.open.method == "" {
		a.env.send(a.server, watchCmd{token: a.h.token, gen: a.gen, methods: a.open.methods, pid: a.me})
		return
	}
	me := a.me
	a.credits = messages.NewCredits(StreamWindow)
	a.env.send(a.server, &messages.Request{Token: a.h.token, Gen: a.gen, Method: a.open.method, Params: a.open.params,
		Deadline: messages.DeadlineNone, Origin: messages.OriginInternal,
		Stream: &messages.StreamSpec{Methods: a.open.methods, Sink: a.env.sinkFor(me), Credits: a.credits},
		Reply:  func(r messages.Reply) { a.env.send(me, streamOutcome{r}) }})
}

func (a *streamActor) exec(c actor.Context, effects []extension.StreamEffect) {
	for len(effects) > 0 {
		e := effects[0]
		effects = effects[1:]
		switch e := e.(type) {
		case extension.Deliver:
			if err := a.deliver(e.Method, e.Params); err != nil {
				effects = append(effects, a.st.HandlerFailed(err)...)
			}
		case extension.CancelRequest:
			if a.settled {
				continue
			}
			if a.open.method == "" {
				a.settled = true
				a.env.send(a.server, unwatchCmd{token: a.h.token})
			} else {
				a.env.send(a.server, &messages.Abort{Token: a.h.token})
			}
		case extension.Finish:
			if a.credits != nil {
				a.credits.Close() // a reader waiting for a credit goes on; the rest is dropped
			}
			a.h.finish(e.End)
			a.env.send(a.session, streamDone{token: a.h.token})
			a.maybeStop(c)
		}
	}
}

// deliver runs the consumer's handler; a panic is its failure too. The
// frame's credit returns when the handler has returned, or, for a
// deferred handler, when it says the frame is done (or failed).
func (a *streamActor) deliver(method string, params json.RawMessage) (err error) {
	var once sync.Once
	release := func() { once.Do(a.release) }
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
		if err != nil || a.open.deferred == nil {
			release()
		}
	}()
	switch {
	case a.open.deferred != nil:
		return a.open.deferred(method, params, release)
	case a.open.handler != nil:
		return a.open.handler(method, params)
	}
	return nil
}

// release returns one frame's credit (observers have none).
func (a *streamActor) release() {
	if a.credits != nil {
		a.credits.Release()
	}
}

// maybeStop stops the actor once it has ended and the server holds
// nothing of it; frames still in its mailbox are dropped with it.
func (a *streamActor) maybeStop(c actor.Context) {
	if _, ended := a.st.Ended(); ended && a.settled {
		c.Stop(a.me)
	}
}
