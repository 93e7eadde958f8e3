package remote

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/sessions"
)

// Typed subscriptions through a session: the member's side of
// Session.Subscribe (session_subscribe.go), mcprt.Runtime.Subscribe run
// on the member for the session, owned by its session actor.
//
// The subscribe is a call like any (the rules of package sessions answer
// it once, cancel it with the session); its subscription lives on until
// the session stops it (opUnsubscribe), the session ends (detach, crash,
// silence, its process's death: the actor's end cancels its life), or
// the subscription ends or fails on its own (its final status is the last
// delivery). The runtime calls the handler where the event was handled,
// and it must return at once: it only queues the delivery. A drain on a
// pool goroutine sends what is queued to the session, in order, after the
// subscribe's reply, on the session's link (at most one drain per
// subscription: deliveries never overtake each other).
//
// A session that does not take its deliveries (its link backs up, its
// handler is slow) cannot hold the runtime back: at most maxTypedBacklog
// deliveries (maxTypedBacklogBytes of data) wait per subscription; one
// more ends the subscription on the member with a final "failed" status
// (EndReason "overrun") saying how many waited, queued after them, with
// the cursor of the last event queued, so the session may resume from its Cursor without losing an
// event. What the runtime delivers after that (before the end takes
// effect) is counted (late) and not sent: it follows that cursor.

const (
	opSubscribe   = "subscribe"   // the typed API's Subscribe
	opUnsubscribe = "unsubscribe" // a typed subscription's Stop
)

// maxTypedBacklog bounds the deliveries of one typed subscription waiting
// for its session, and maxTypedBacklogBytes their events' data (one
// delivery may wait whatever its size).
const (
	maxTypedBacklog      = 1024
	maxTypedBacklogBytes = 32 << 20
)

// maxTypedBatch bounds the deliveries one typedMsg carries, and
// maxTypedBatchBytes their data (a batch holds at least one).
const (
	maxTypedBatch      = 64
	maxTypedBatchBytes = 1 << 20
)

// subscribeArgs are opSubscribe's arguments. Key is the session's name
// for the subscription (its deliveries carry it); Cursor and MaxAgeMs are
// mcprt.FromCursor's and mcprt.MaxAge's.
type subscribeArgs struct {
	Key      uint64          `json:"key"`
	Server   string          `json:"server"`
	Event    string          `json:"event"`
	Args     json.RawMessage `json:"args,omitempty"`
	Cursor   *string         `json:"cursor,omitempty"`
	MaxAgeMs *int64          `json:"maxAgeMs,omitempty"`
}

// subscribedResult answers opSubscribe: the subscription's id and cursor.
type subscribedResult struct {
	ID     string `json:"id"`
	Cursor string `json:"cursor,omitempty"`
}

// unsubscribeArgs are opUnsubscribe's arguments.
type unsubscribeArgs struct {
	Key uint64 `json:"key"`
}

// typedMsg carries deliveries of the session's typed subscription Key, in
// order.
type typedMsg struct {
	Key        uint64           `json:"key"`
	Deliveries []mcprt.Delivery `json:"d"`
}

// typedHandle is a running typed subscription: the runtime's, or a
// peer's through this member's session on it.
type typedHandle interface {
	ID() string
	Cursor() string
	Stop()
}

// typedGone tells the session actor a subscription ended on its own.
type typedGone struct{ t *typedSub }

// typedSub is one typed subscription of a session on the member.
type typedSub struct {
	key  uint64
	call uint64          // its subscribe's request id (the rules' name for it with key)
	a    *sessionActor   // its session's actor (client, reply, expiring)
	life context.Context // the subscription's life: ending it ends the subscription
	end  context.CancelFunc
	// abandoned: the session cancelled the subscribe (its caller gave up).
	abandoned atomic.Bool

	mu sync.Mutex
	// The fields below are guarded by mu.
	handle  typedHandle // set once subscribed
	queue   []mcprt.Delivery
	bytes   int    // the queued events' data
	cursor  string // the last queued event's cursor
	adopted bool   // the session has the subscribe's reply: deliveries may leave
	sending bool   // a drain runs
	final   bool   // the final status is queued: nothing follows it
	halted  bool   // ended here: nothing more is sent
	late    int    // deliveries after an overrun, not sent
}

// startTyped runs a typed subscribe or unsubscribe on the pool (start
// hands them here); false for any other request. The rules decided it
// runs (a subscribe of a key in use, or beyond the session's limits, is
// refused before).
func (a *sessionActor) startTyped(m *requestMsg) bool {
	if m.Op != opSubscribe && m.Op != opUnsubscribe {
		return false
	}
	cctx, cancel := context.WithCancel(mcprt.WithCaller(ctxBackground, sessionCall{pid: a.self, id: m.ID}))
	var key struct {
		Key uint64 `json:"key"`
	}
	_ = json.Unmarshal(m.Args, &key)
	t := a.typed[key.Key]
	if m.Op == opSubscribe {
		life, end := context.WithCancel(ctxBackground)
		t = &typedSub{key: key.Key, call: m.ID, a: a, life: life, end: end}
		if a.typed == nil {
			a.typed = map[uint64]*typedSub{}
		}
		a.typed[key.Key] = t
		a.calls[m.ID] = func() {
			t.abandoned.Store(true)
			cancel()
		}
	} else {
		delete(a.typed, key.Key)
		if t != nil {
			t.halt() // nothing more is sent
		}
		a.calls[m.ID] = cancel
	}
	srv, self, member := a.srv, a.self, a.member
	ran := srv.pool.run(func() {
		defer cancel()
		done := callDone{id: m.ID, req: m}
		var result json.RawMessage
		var err error
		switch {
		case m.Op == opUnsubscribe:
			if t != nil {
				t.stop()
			}
			result, _ = json.Marshal(map[string]bool{"stopped": true})
		default:
			done.typed = t
			if result, err = srv.subscribeTyped(cctx, t, m, member); err == nil {
				done.sub = t.id() // the rules hold it from now on, if they take it
			}
		}
		done.reply = &replyMsg{ID: m.ID, Result: result, Err: toWireErr(err)}
		srv.n.sys.Root.Send(self, done)
	})
	if !ran { // the member is closing: Close answers the session
		cancel()
		delete(a.calls, m.ID)
		id := a.self.Id
		a.exec(nil, a.srv.router.do(func(c *sessions.Member) []sessions.Effect { return c.Forget(id, m.ID, "") }), input{})
		// A subscribe's EndTyped ended it.
	}
	return true
}

// subscribeTyped subscribes for t on the runtime, or on the peer running
// the server (never for another member's session: its requests are not
// forwarded again).
func (s *Server) subscribeTyped(ctx context.Context, t *typedSub, m *requestMsg, fromMember bool) (json.RawMessage, error) {
	a, err := opArgs[subscribeArgs](m)
	if err != nil {
		t.end()
		return nil, err
	}
	var opts []mcprt.SubscribeOption
	if a.Cursor != nil {
		opts = append(opts, mcprt.FromCursor(*a.Cursor))
	}
	if a.MaxAgeMs != nil {
		opts = append(opts, mcprt.MaxAge(time.Duration(*a.MaxAgeMs)*time.Millisecond))
	}
	var args any
	if len(a.Args) > 0 {
		args = a.Args
	}
	// The call's cancel (the session's, or its end) aborts the subscribe;
	// once subscribed, only t's life bounds the subscription.
	stop := context.AfterFunc(ctx, t.end)
	defer stop()
	var h typedHandle
	if ps, perr := s.typedPeer(ctx, a.Server, fromMember); perr != nil {
		err = perr
	} else if ps != nil {
		var sub *Subscription
		if sub, err = ps.Subscribe(t.life, a.Server, a.Event, args, t.deliver, opts...); err == nil {
			h = sub
		}
	} else {
		var sub *mcprt.Subscription
		if sub, err = s.rt.Subscribe(t.life, a.Server, a.Event, args, t.deliver, opts...); err == nil {
			h = sub
		}
	}
	if err != nil {
		t.end()
		return nil, err
	}
	t.mu.Lock()
	t.handle = h
	t.mu.Unlock()
	b, err := json.Marshal(subscribedResult{ID: h.ID(), Cursor: h.Cursor()})
	return b, err
}

// typedPeer is this member's session on the peer running server, when
// it is not this member's to run (peerFor); nil to run it here.
func (s *Server) typedPeer(ctx context.Context, server string, fromMember bool) (*Session, error) {
	if fromMember {
		return nil, nil
	}
	return s.peerFor(ctx, server)
}

// settleTyped takes a subscribe's outcome, in the session actor's turn
// after its effects: the rules ended a subscription the session will
// never learn of (the call was cancelled, the session ended, it stopped
// it meanwhile, or the subscribe failed: EndTyped); one answered is
// adopted (its deliveries leave from now on, after the reply), and
// forgotten here when it ended on its own meanwhile (its final status
// leaves too).
func (a *sessionActor) settleTyped(t *typedSub, effs []sessions.Effect) {
	if t == nil {
		return
	}
	ended := slices.ContainsFunc(effs, func(e sessions.Effect) bool { return e.Kind == sessions.EndTyped && e.ID == t.call })
	replied := slices.ContainsFunc(effs, func(e sessions.Effect) bool { return e.Kind == sessions.Reply })
	if !ended && replied && t.adopt() {
		return
	}
	if a.typed[t.key] == t {
		delete(a.typed, t.key)
	}
	if ended || !replied {
		t.halt()
		t.end()
	}
}

// typedEnded forgets a subscription that ended on its own (typedGone):
// it no longer counts against the session's limit.
func (a *sessionActor) typedEnded(t *typedSub) {
	sid := a.self.Id
	a.srv.router.do(func(c *sessions.Member) []sessions.Effect { c.TypedGone(sid, t.key, t.call); return nil })
	t.mu.Lock()
	adopted := t.adopted
	t.mu.Unlock()
	if adopted && a.typed[t.key] == t { // not adopted yet: settleTyped forgets it
		delete(a.typed, t.key)
	}
}

// endTyped ends the session's typed subscription key made by subscribe
// call (sessions.EndTyped: its end, a subscribe given up).
func (a *sessionActor) endTyped(key, call uint64) {
	if t := a.typed[key]; t != nil && t.call == call {
		delete(a.typed, key)
		t.halt()
		t.end() // the runtime's context watch stops it on the wire
	}
}

// id is the subscription's id (set once subscribed).
func (t *typedSub) id() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handle.ID()
}
