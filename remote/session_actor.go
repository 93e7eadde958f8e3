package remote

import (
	"context"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// sessionActor is one attached session on the serving member. It holds
// what is the session's own: its calls in flight (each holds its lease on
// a server's connection until it ends), the subscriptions it made, and
// its liveness timer. Ending it (detach, timeout, its connection's end)
// cancels its calls and unsubscribes its subscriptions; nothing of another
// session is touched, and connections stay with their servers' actors,
// which close them by their own idle rules.
type sessionActor struct {
	srv    *Server
	client *actor.PID
	self   *actor.PID
	member bool // another member's session: nothing is forwarded for it

	calls map[uint64]context.CancelFunc // by request id
	subs  map[string]bool               // subscription ids it owns
	asks  map[uint64]bool               // questions put to the session, unanswered

	timer clock.Timer
	beat  uint64 // the live timer's token
	// beatNow is beat, for the timer's own goroutine. When the timer
	// finds the session silent for its timeout it sets expiring: from then
	// on this actor writes to the session through protoactor's writer,
	// which never blocks, and a write blocked on the session's stream now
	// is aborted (server_links.go).
	beatNow  atomic.Uint64
	expiring atomic.Bool
	ended    bool
	// stopWhenDone: the session ended and the actor stops once its last
	// call's goroutine has reported (so a subscription it made is
	// released, never left to a dead letter).
	stopWhenDone bool
	// crashed is the end reason noted when this actor crashed (a panic in
	// its turn, supervise_actors.go): it ends its session before it takes
	// anything else.
	crashed string
}

// Local messages of a session actor.
type (
	// callDone is a call's outcome, from its goroutine.
	callDone struct {
		id    uint64
		reply *replyMsg
		sub   string // a subscription the call made, if any
	}
	// expired is the liveness timer's firing.
	expired struct{ beat uint64 }
	// sessionEnd ends the session (its connection ended, shutdown).
	sessionEnd struct{ why string }
)

func (a *sessionActor) Receive(ctx actor.Context) {
	if a.crashed != "" && !a.ended {
		if _, stopping := ctx.Message().(*actor.Stopping); !stopping {
			a.end(ctx, a.crashed, true)
		}
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self = ctx.Self()
		a.arm(ctx)
		return
	case *actor.Stopping:
		why := "the serving runtime is stopping"
		if a.crashed != "" {
			why = a.crashed
		}
		a.end(ctx, why, false)
		return
	case callDone:
		a.done(ctx, m)
		return
	case expired:
		if m.beat == a.beat {
			a.end(ctx, "no heartbeat within "+a.srv.opts.SessionTimeout.String(), true)
		}
		return
	case sessionEnd:
		a.end(ctx, m.why, true)
		return
	case askOut:
		a.askOut(m)
		return
	case routed:
		if !a.ended {
			// Through protoactor's own writer: a delivery never waits
			// on a session's stream.
			var err error
			if m.deliver != nil {
				err = a.srv.n.send(a.client, m.deliver)
			} else {
				err = a.srv.n.send(a.client, m.notify)
			}
			if err != nil {
				a.srv.logger.Warn("remote: delivering to a session", "err", err)
			}
		}
		return
	}
	msg := wireMessage(ctx.Message(), a.srv.logger)
	if msg == nil || a.ended {
		return
	}
	a.arm(ctx) // any message of the session is a sign of life
	switch m := msg.(type) {
	case *requestMsg:
		a.start(m)
	case *cancelMsg:
		if cancel, ok := a.calls[m.ID]; ok {
			cancel()
			a.srv.router.finish(a.self, m.ID)
		}
	case *answerMsg:
		if a.asks[m.ID] { // only what was asked of this session
			delete(a.asks, m.ID)
			a.srv.answered(m)
		}
	case heartbeatMsg:
		a.reply(heartbeatMsg{}) // the session's sign that this member lives
	case detachMsg:
		a.end(ctx, "it detached", true)
	}
}

// arm restarts the liveness timer.
func (a *sessionActor) arm(ctx actor.Context) {
	if a.timer != nil {
		a.timer.Stop()
	}
	a.beat++
	a.beatNow.Store(a.beat)
	a.expiring.Store(false)
	beat, self, sys, srv, addr := a.beat, ctx.Self(), ctx.ActorSystem(), a.srv, a.client.Address
	a.timer = a.srv.clock.AfterFunc(a.srv.opts.SessionTimeout, func() {
		if a.beatNow.Load() == beat {
			a.expiring.Store(true)
			srv.abortLink(addr)
		}
		sys.Root.Send(self, expired{beat: beat})
	})
}

// start runs one request on a goroutine of the member's pool (a tool call
// blocks); its outcome comes back as callDone.
func (a *sessionActor) start(m *requestMsg) {
	if _, dup := a.calls[m.ID]; dup {
		a.reply(&replyMsg{ID: m.ID, Err: toWireErr(messages.Errorf(messages.KindInvalidArgs, "", "request id %d is already in flight", m.ID))})
		return
	}
	handled, own := a.intercept(m)
	if handled {
		return
	}
	cctx, cancel := context.WithCancel(mcprt.WithCaller(ctxBackground, sessionCall{pid: a.self, id: m.ID}))
	a.calls[m.ID] = cancel
	if server, counts := requestServer(m); counts {
		a.srv.router.begin(a.self, m.ID, server)
	}
	srv, self, member := a.srv, a.self, a.member
	ran := srv.pool.run(func() {
		defer cancel()
		result, sub, err := srv.execute(cctx, m, member)
		if own != nil && err == nil {
			result = onlyOwn(result, own)
		}
		srv.n.sys.Root.Send(self, callDone{id: m.ID, sub: sub, reply: &replyMsg{ID: m.ID, Result: result, Err: toWireErr(err)}})
	})
	if !ran { // the member is closing: Close answers the session
		cancel()
		delete(a.calls, m.ID)
		a.srv.router.finish(a.self, m.ID)
	}
}

func (a *sessionActor) done(ctx actor.Context, m callDone) {
	delete(a.calls, m.id)
	a.srv.router.finish(a.self, m.id)
	if m.sub != "" && !a.subs[m.sub] {
		a.subs[m.sub] = true
		a.srv.router.own(m.sub, a.self)
		if a.ended {
			a.release(m.sub)
		}
	}
	if !a.ended {
		a.reply(m.reply)
	}
	a.stopIfDone(ctx)
}

// forget drops a call whose outcome cannot be taken (its actor crashed
// on it twice): a subscription it made is released, nothing is answered
// (the session ends with the crash).
func (a *sessionActor) forget(m callDone) {
	delete(a.calls, m.id)
	a.srv.router.finish(a.self, m.id)
	if m.sub != "" && !a.subs[m.sub] {
		a.srv.router.own(m.sub, a.self)
		a.release(m.sub)
	}
}

// stopIfDone stops an ended session's actor once no call's goroutine is
// still to report.
func (a *sessionActor) stopIfDone(ctx actor.Context) {
	if a.stopWhenDone && len(a.calls) == 0 {
		a.stopWhenDone = false
		ctx.Stop(a.self)
	}
}

// end cancels the session's calls and subscriptions and stops the actor.
func (a *sessionActor) end(ctx actor.Context, why string, stop bool) {
	if a.ended {
		return
	}
	a.ended = true
	if a.timer != nil {
		a.timer.Stop()
	}
	a.srv.logger.Info("session ended", "session", a.self.Id, "why", why, "calls", len(a.calls), "subscriptions", len(a.subs))
	// Every call in flight is answered now, once; its goroutine's late
	// outcome is dropped (done).
	ended := toWireErr(messages.Errorf(messages.KindDisconnected, "", "the shared runtime ended this session: %s", why))
	for id, cancel := range a.calls {
		cancel()
		a.reply(&replyMsg{ID: id, Err: ended})
	}
	a.reply(&endedMsg{Err: ended})
	for id := range a.asks {
		a.srv.answered(&answerMsg{ID: id, Err: ended})
	}
	for sub := range a.subs {
		a.release(sub)
	}
	a.srv.router.remove(a.self)
	if stop {
		a.stopWhenDone = true
		a.stopIfDone(ctx)
	}
}

// release ends the session's share of a subscription; the runtime's
// subscription ends with its last owner.
func (a *sessionActor) release(sub string) {
	if a.srv.router.release(sub, a.self) {
		a.unsubscribe(sub)
	}
}

// unsubscribe ends a subscription on the runtime.
func (a *sessionActor) unsubscribe(sub string) {
	srv := a.srv
	srv.calls.Add(1)
	go func() {
		defer srv.calls.Done()
		srv.endSubscription(sub)
	}()
}

// reply sends a wire message to the session's process.
func (a *sessionActor) reply(m any) {
	send := a.srv.sendTo
	if a.expiring.Load() {
		send = a.srv.n.send // never waits on a silent session's stream
	}
	if err := send(a.client, m); err != nil {
		a.srv.logger.Warn("remote: answering a session", "err", err)
	}
}

// askOut passes a question (or its withdrawal) to the session; a session
// that ended answers at once with the error it ended with.
func (a *sessionActor) askOut(m askOut) {
	if m.msg == nil {
		if a.asks[m.cancel] {
			delete(a.asks, m.cancel)
			a.reply(&askCancelMsg{ID: m.cancel})
		}
		return
	}
	if a.ended {
		if m.msg.ID != 0 {
			a.srv.answered(&answerMsg{ID: m.msg.ID, Err: toWireErr(messages.Errorf(messages.KindDisconnected, m.msg.Server, "the session asked has ended"))})
		}
		return
	}
	if m.msg.ID != 0 {
		a.asks[m.msg.ID] = true
	}
	a.reply(m.msg)
}
