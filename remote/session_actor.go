package remote

import (
	"context"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/sessions"
)

// sessionActor is one attached session on the serving member. It holds
// what is the session's own: its calls in flight (each holds its lease on
// a server's connection until it ends), the subscriptions it made, and
// its liveness timer. Ending it (detach, timeout, its connection's end)
// cancels its calls and unsubscribes its subscriptions; nothing of another
// session is touched, and connections stay with their servers' actors,
// which close them by their own idle rules.
//
// The rules are package sessions' (held by the router, under its lock):
// the actor feeds them every message and executes the effects they return
// (exec), in order.
type sessionActor struct {
	srv    *Server
	client *actor.PID
	self   *actor.PID
	member bool // another member's session: nothing is forwarded for it

	calls map[uint64]context.CancelFunc // by request id
	// held keeps a subscribe whose outcome named a subscription being
	// ended, until the rules run it again (sessions.Rerun, rerunMsg).
	held map[uint64]*requestMsg
	// typed are the session's typed subscriptions, by its key (ops_subscribe.go).
	typed map[uint64]*typedSub

	// live is the liveness timer (session_live.go). When it finds the
	// session silent for its timeout it sets expiring: from then on this
	// actor writes to the session through protoactor's writer, which
	// never blocks, and a write blocked on the session's stream now is
	// aborted (server_links.go).
	live     liveness
	expiring atomic.Bool
	ended    bool
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
		req   *requestMsg
		reply *replyMsg
		sub   string // a subscription the call made, if any
		typed *typedSub
	}
	// rerunMsg runs a held subscribe again (router.do sends it).
	rerunMsg struct{ id uint64 }
	// expired is the liveness timer's firing.
	expired struct{ beat uint64 }
	// sessionEnd ends the session (its connection ended, shutdown).
	sessionEnd struct{ why string }
)

// input is what an effect may need of the message that caused it.
type input struct {
	req    *requestMsg
	reply  *replyMsg
	answer *answerMsg
	ask    *askMsg
}

func (a *sessionActor) Receive(ctx actor.Context) {
	r, id := a.srv.router, ""
	if a.self != nil {
		id = a.self.Id
	}
	if a.crashed != "" && !a.ended {
		if _, stopping := ctx.Message().(*actor.Stopping); !stopping {
			why := a.crashed
			a.exec(ctx, r.do(func(c *sessions.Member) []sessions.Effect { return c.End(id, why, true) }), input{})
		}
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self = ctx.Self()
		a.exec(ctx, r.attach(a.self, a.client.Address, a.member), input{})
		return
	case *actor.Stopping:
		why := "the serving runtime is stopping"
		if a.crashed != "" {
			why = a.crashed
		}
		a.exec(ctx, r.do(func(c *sessions.Member) []sessions.Effect { return c.End(id, why, false) }), input{})
		return
	case callDone:
		delete(a.calls, m.id)
		again := false
		effs := r.do(func(c *sessions.Member) []sessions.Effect {
			effs := c.CallDone(id, m.id, m.sub)
			again = c.Has(id, m.id) // to run again: its rerunMsg comes
			return effs
		})
		if again {
			if a.held == nil {
				a.held = map[uint64]*requestMsg{}
			}
			a.held[m.id] = m.req
		}
		a.exec(ctx, effs, input{reply: m.reply})
		a.settleTyped(m.typed, effs)
		return
	case typedGone:
		a.typedEnded(m.t)
		return
	case rerunMsg:
		req := a.held[m.id]
		delete(a.held, m.id)
		if a.ended || req == nil { // the session ended meanwhile: the outcome will never be taken
			a.exec(ctx, r.do(func(c *sessions.Member) []sessions.Effect { return c.Forget(id, m.id, "") }), input{})
		} else {
			a.start(req, nil)
		}
		return
	case expired:
		why := "no heartbeat within " + a.srv.opts.SessionTimeout.String()
		a.exec(ctx, r.do(func(c *sessions.Member) []sessions.Effect { return c.Expired(id, m.beat, why) }), input{})
		return
	case sessionEnd:
		a.exec(ctx, r.do(func(c *sessions.Member) []sessions.Effect { return c.End(id, m.why, true) }), input{})
		return
	case askOut:
		if m.msg == nil {
			a.exec(ctx, r.do(func(c *sessions.Member) []sessions.Effect { return c.Withdraw(id, m.cancel) }), input{})
		} else if m.msg.ID == 0 { // a notification (a URL elicitation's end): no answer
			if !a.ended {
				a.reply(m.msg)
			}
		} else {
			a.exec(ctx, r.do(func(c *sessions.Member) []sessions.Effect { return c.AskOut(id, m.msg.ID) }), input{ask: m.msg})
		}
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
	var effs []sessions.Effect
	in := input{}
	switch m := msg.(type) {
	case *requestMsg:
		req := ruleRequest(m)
		effs, in.req = r.do(func(c *sessions.Member) []sessions.Effect { return c.Request(id, req) }), m
	case *cancelMsg:
		effs = r.do(func(c *sessions.Member) []sessions.Effect { return c.Cancel(id, m.ID) })
	case *answerMsg:
		effs, in.answer = r.do(func(c *sessions.Member) []sessions.Effect { return c.Answer(id, m.ID) }), m
	case heartbeatMsg:
		effs = r.do(func(c *sessions.Member) []sessions.Effect { return c.Heartbeat(id) })
	case detachMsg:
		effs = r.do(func(c *sessions.Member) []sessions.Effect { return c.Detach(id, "it detached") })
	default: // any message of the session is a sign of life
		effs = r.do(func(c *sessions.Member) []sessions.Effect { return c.Alive(id) })
	}
	a.exec(ctx, effs, in)
}

// exec executes the effects of one input, in order (ctx is nil outside a
// turn of the actor's own: Stop then goes through the root).
func (a *sessionActor) exec(ctx actor.Context, effs []sessions.Effect, in input) {
	for _, e := range effs {
		switch e.Kind {
		case sessions.Arm:
			a.arm(e.Beat)
		case sessions.StopTimer:
			a.ended = true
			a.live.stop()
		case sessions.Run:
			a.start(in.req, e.Filter)
		case sessions.CancelCall:
			if cancel := a.calls[e.ID]; cancel != nil {
				cancel()
			}
		case sessions.Reply:
			a.reply(in.reply)
		case sessions.ReplyDuplicate:
			a.reply(&replyMsg{ID: e.ID, Err: toWireErr(messages.Errorf(messages.KindInvalidArgs, "", "request id %d is already in flight", e.ID))})
		case sessions.ReplyStopped:
			a.replyResult(e.ID, stoppedResult())
		case sessions.ReplyEnded:
			a.reply(&replyMsg{ID: e.ID, Err: endedErr(e.Why)})
		case sessions.Ended:
			a.srv.logger.Info("session ended", "session", a.self.Id, "why", e.Why, "calls", e.Calls, "subscriptions", e.Subs)
			a.reply(&endedMsg{Err: endedErr(e.Why)})
			a.srv.endProtocols(a.self.Id) // protocol_member.go
		case sessions.HeartbeatAck:
			a.reply(heartbeatMsg{}) // the session's sign that this member lives
		case sessions.PassAnswer:
			a.srv.answered(in.answer)
		case sessions.AnswerEnded:
			a.srv.answered(&answerMsg{ID: e.ID, Err: endedErr(e.Why)})
		case sessions.PassAsk:
			a.reply(in.ask)
		case sessions.WithdrawAsk:
			a.reply(&askCancelMsg{ID: e.ID})
		case sessions.RefuseAsk:
			a.srv.answered(&answerMsg{ID: e.ID, Err: toWireErr(messages.Errorf(messages.KindDisconnected, in.ask.Server, "the session asked has ended"))})
		case sessions.Refuse:
			a.reply(&replyMsg{ID: e.ID, Err: limitErr(e)})
		case sessions.EndTyped:
			a.endTyped(e.Key, e.ID)
		case sessions.Unsubscribe:
			a.unsubscribe(e.Sub)
		case sessions.Stop:
			if ctx != nil {
				ctx.Stop(a.self)
			} else {
				a.srv.n.sys.Root.Stop(a.self)
			}
		}
	}
}

// endedErr is the error a session's calls and questions get when it ends.
func endedErr(why string) *wireErr {
	return toWireErr(messages.Errorf(messages.KindDisconnected, "", "the shared runtime ended this session: %s", why))
}

// start runs one request on a goroutine of the member's pool (a tool call
// blocks); its outcome comes back as callDone. For a list, own is the
// session's subscriptions, to keep of the runtime's answer.
func (a *sessionActor) start(m *requestMsg, own map[string]bool) {
	if a.startTyped(m) {
		return
	}
	cctx, cancel := context.WithCancel(mcprt.WithCaller(ctxBackground, sessionCall{pid: a.self, id: m.ID}))
	a.calls[m.ID] = cancel
	srv, self, member := a.srv, a.self, a.member
	ran := srv.pool.run(func() {
		defer cancel()
		result, sub, err := srv.execute(cctx, m, member)
		srv.withdraw(m, result, err) // it failed here: offers.go
		if own != nil && err == nil {
			result = onlyOwn(result, own)
		}
		srv.n.sys.Root.Send(self, callDone{id: m.ID, req: m, sub: sub, reply: &replyMsg{ID: m.ID, Result: result, Err: toWireErr(err)}})
	})
	if !ran { // the member is closing: Close answers the session
		cancel()
		delete(a.calls, m.ID)
		id := a.self.Id
		a.exec(nil, a.srv.router.do(func(c *sessions.Member) []sessions.Effect { return c.Forget(id, m.ID, "") }), input{})
	}
}

// forget drops a call whose outcome cannot be taken (its actor crashed
// on it twice): a subscription it made is released, nothing is answered
// (the session ends with the crash).
func (a *sessionActor) forget(m callDone) {
	delete(a.calls, m.id)
	id := a.self.Id
	effs := a.srv.router.do(func(c *sessions.Member) []sessions.Effect { return c.Forget(id, m.id, m.sub) })
	a.exec(nil, effs, input{})
	a.settleTyped(m.typed, effs)
}

// unsubscribe ends a subscription on the runtime: its last owner left.
func (a *sessionActor) unsubscribe(sub string) {
	srv := a.srv
	srv.calls.Add(1)
	go func() {
		defer srv.calls.Done()
		srv.endSubscription(sub)
		// Subscribes that were answered with it meanwhile run again.
		srv.router.do(func(c *sessions.Member) []sessions.Effect { return c.Unsubscribed(sub) })
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
