package remote

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// Typed subscriptions of an attached session: Session.Subscribe is
// mcprt.Runtime.Subscribe run on the member for this session
// (ops_subscribe.go). The handler runs on this process's receiver, as
// Host.Deliver does: one delivery at a time, in order, never concurrently
// with itself.

// Subscription is a typed subscription through an attached session, the
// counterpart of mcprt.Subscription.
type Subscription struct {
	s             *Session
	key           uint64 // this session's name for it on the wire
	server, event string
	h             mcprt.EventHandler

	id      atomic.Pointer[string]
	cursor  atomic.Pointer[string]
	stopped atomic.Bool // Stop was called (or the subscribe failed)
	done    atomic.Bool // its final status was delivered
	unwatch atomic.Pointer[func() bool]
}

// typedSubs are a session's typed subscriptions.
type typedSubs struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	next uint64
	by   map[uint64]*Subscription

	// busy counts the receiver's calls into the host in progress (a
	// handler, Deliver, Notify): a Stop made from one cannot wait for
	// the member's answer, which that receiver takes.
	busy atomic.Int32
}

func (ts *typedSubs) add(sub *Subscription) uint64 {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.next++
	if ts.by == nil {
		ts.by = map[uint64]*Subscription{}
	}
	ts.by[ts.next] = sub
	return ts.next
}

func (ts *typedSubs) get(key uint64) *Subscription {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.by[key]
}

func (ts *typedSubs) remove(key uint64) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.by, key)
}

// ID is the subscription's id, as its deliveries carry it.
func (t *Subscription) ID() string {
	if id := t.id.Load(); id != nil {
		return *id
	}
	return ""
}

// Cursor is the cursor of the last event delivered, "" before any: pass
// it to mcprt.FromCursor to resume later without losing events.
func (t *Subscription) Cursor() string {
	if c := t.cursor.Load(); c != nil {
		return *c
	}
	return ""
}

// Stop ends the subscription, on the member and on the wire to its
// server. No delivery starts after Stop returns. It returns once the
// member has ended it, except when called from a call of this session's
// receiver into the host (a handler, Host.Deliver or Notify), which takes
// the member's answer: then the member ends it right after. Stopping
// twice, after the subscription ended, or after Close, does nothing more.
func (t *Subscription) Stop() {
	if t.stopped.Swap(true) {
		return
	}
	if f := t.unwatch.Load(); f != nil {
		(*f)()
	}
	s := t.s
	s.typed.remove(t.key)
	if t.done.Load() {
		return // it ended on the member already
	}
	if s.typed.busy.Load() > 0 {
		s.unsubscribeLater(t.key)
		return
	}
	args, _ := json.Marshal(unsubscribeArgs{Key: t.key})
	_, _ = s.request(s.ctx, opUnsubscribe, "", args)
}

// unsubscribeLater ends the member's subscription key without waiting
// (once the session ended, the member ended its subscriptions).
func (s *Session) unsubscribeLater(key uint64) {
	args, _ := json.Marshal(unsubscribeArgs{Key: key})
	s.requestLater(opUnsubscribe, "", args)
}

// requestLater sends one operation without waiting for its answer, unless
// the session ended; Close waits for it.
func (s *Session) requestLater(op, name string, args []byte) {
	s.mu.Lock()
	if s.gone != nil {
		s.mu.Unlock()
		return
	}
	s.asking.Add(1) // Close waits for it
	s.mu.Unlock()
	go func() {
		defer s.asking.Done()
		_, _ = s.request(s.ctx, op, name, args)
	}()
}

// Subscribe subscribes to a server's event on the member (see
// mcprt.Runtime.Subscribe, whose contract it keeps): args is any value
// that marshals to a JSON object (nil for none); it returns once the
// server has acknowledged the stream. From then on h receives every event
// and status change of the subscription, in order and one at a time,
// until ctx ends, Stop is called, the subscription ends or fails (its
// final status is the last delivery), or the session ends: ctx bounds
// both the subscribe and the subscription's life. The subscription is
// this session's alone (never shared with another session's, and never
// in mcp_events' list); the session's end (Close, its process's death,
// silence) ends it on the member. When the member is lost, h gets a final
// "failed" status (EndReason "disconnected"); a session whose handler does
// not keep up gets a final "failed" status (EndReason "overrun") once
// 1,024 deliveries (or 32 MiB) wait on the member (docs/shared.md). A
// server another member runs is subscribed there, through this member.
func (s *Session) Subscribe(ctx context.Context, server, event string, args any, h mcprt.EventHandler, opts ...mcprt.SubscribeOption) (*Subscription, error) {
	if h == nil || event == "" {
		return nil, messages.Errorf(messages.KindInvalidArgs, server, "Subscribe needs an event name and a handler")
	}
	raw, err := json.Marshal(args)
	if err == nil && string(raw) == "null" { // nil, or a nil map
		raw = []byte(`{}`)
	}
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return nil, messages.Errorf(messages.KindInvalidArgs, server, "the event's arguments must be a JSON object")
	}
	a := subscribeArgs{Server: server, Event: event, Args: raw}
	if cursor, ok, maxAge := mcprt.SubscribeOptionValues(opts...); ok || maxAge != nil {
		if ok {
			a.Cursor = &cursor
		}
		if maxAge != nil {
			ms := maxAge.Milliseconds()
			a.MaxAgeMs = &ms
		}
	}
	t := &Subscription{s: s, server: server, event: event, h: h}
	t.key = s.typed.add(t)
	a.Key = t.key
	b, err := json.Marshal(a)
	if err != nil {
		s.typed.remove(t.key)
		return nil, messages.Errorf(messages.KindInvalidArgs, server, "arguments: %s", err)
	}
	res, err := s.request(ctx, opSubscribe, "", b)
	if err != nil {
		t.stopped.Store(true)
		s.typed.remove(t.key)
		if ctx.Err() != nil { // given up: a subscription made meanwhile ends
			s.unsubscribeLater(t.key)
		}
		return nil, err
	}
	var r subscribedResult
	if err := json.Unmarshal(res, &r); err != nil {
		t.Stop()
		return nil, messages.Errorf(messages.KindInternal, server, "the shared runtime's subscribe result is malformed: %s", err)
	}
	t.id.CompareAndSwap(nil, &r.ID)
	if r.Cursor != "" {
		t.cursor.CompareAndSwap(nil, &r.Cursor) // not over an event delivered meanwhile
	}
	unwatch := context.AfterFunc(ctx, t.Stop)
	t.unwatch.Store(&unwatch)
	return t, nil
}

// deliverTyped hands a typed subscription's deliveries to its handler
// (the receiver's turn).
func (s *Session) deliverTyped(m *typedMsg) {
	t := s.typed.get(m.Key)
	if t == nil {
		return // stopped, or not this session's
	}
	s.typed.busy.Add(1)
	defer s.typed.busy.Add(-1)
	for _, d := range m.Deliveries {
		if t.stopped.Load() || t.done.Load() {
			return
		}
		if e := d.Event; e != nil {
			c := e.Cursor
			t.cursor.Store(&c)
			id := e.Subscription
			t.id.CompareAndSwap(nil, &id)
		}
		if st := d.Status; st != nil && (st.State == "ended" || st.State == "failed") {
			t.done.Store(true)
			s.typed.remove(m.Key)
		}
		t.call(d)
	}
}

// call runs the handler; its panic is the receiver's crash (supervise.go).
func (t *Subscription) call(d mcprt.Delivery) {
	defer asHostPanic()
	t.h(d)
}

// typedLost is the session's end, for its typed subscriptions' handlers
// (in the receiver's turn).
type typedLost struct{ err *messages.Error }

// loseTyped ends every typed subscription of a session that lost its
// member: each handler gets a final "failed" status.
func (s *Session) loseTyped(err *messages.Error) {
	s.typed.mu.Lock()
	subs := s.typed.by
	s.typed.by = nil
	s.typed.mu.Unlock()
	s.typed.busy.Add(1)
	defer s.typed.busy.Add(-1)
	for _, t := range subs {
		if t.stopped.Load() || t.done.Swap(true) {
			continue
		}
		t.call(mcprt.Delivery{Status: &mcprt.SubscriptionStatus{Subscription: t.ID(), Server: t.server, Name: t.event,
			State: "failed", Cursor: t.Cursor(), Error: err.Message, EndReason: "disconnected"}})
	}
}
