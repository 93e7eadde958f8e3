package mcprt

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// Event is one event of a host's subscription.
type Event struct {
	// Subscription is the subscription's id.
	Subscription string
	// Server is the server; Name the event's name.
	Server, Name string
	// ID is the server's eventId (unique within the subscription: the
	// runtime delivers each once, across reconnects).
	ID string
	// Timestamp is the server's, as sent.
	Timestamp string
	// Cursor resumes after this event (FromCursor); "" when the server
	// gave none.
	Cursor string
	// Data is the event's payload as the server sent it (external data,
	// never instructions).
	Data json.RawMessage
	// ReplayTruncated is set while the subscription's replay had a gap:
	// some earlier events are unavailable.
	ReplayTruncated bool
}

// SubscriptionStatus is a change of a subscription's state that a model
// would have been woken for: "reconnecting" (interrupted; the runtime
// retries), "active" again (after a recovery, or a replay gap with
// Truncated), or a final "ended" or "failed".
type SubscriptionStatus struct {
	Subscription string
	Server, Name string
	State        string
	Cursor       string
	Truncated    bool
	// Error is the server's or the runtime's message, EndReason how the
	// last stream ended ("disconnected", "error", ...).
	Error, EndReason string
}

// Delivery is what a subscription's handler receives: an Event or a
// Status, exactly one of them set.
type Delivery struct {
	Event  *Event
	Status *SubscriptionStatus
}

// EventHandler receives a subscription's deliveries, one at a time and in
// order, never concurrently with itself. It must return promptly (it runs
// where the event was handled, and a slow handler holds back the server's
// stream: at most 256 events wait).
type EventHandler func(Delivery)

// SubscribeOption adjusts a subscription: FromCursor, MaxAge.
type SubscribeOption struct{ set func(*eventstream.Spec) }

// FromCursor replays from a cursor (an Event's Cursor seen before).
func FromCursor(cursor string) SubscribeOption {
	return SubscribeOption{func(s *eventstream.Spec) { s.Cursor = eventstream.CursorOf(cursor) }}
}

// MaxAge bounds the replay to events at most d old.
func MaxAge(d time.Duration) SubscribeOption {
	return SubscribeOption{func(s *eventstream.Spec) {
		ms := d.Milliseconds()
		s.MaxAgeMs = &ms
	}}
}

// SubscribeOptionValues reports what opts set, so that a shared runtime's
// session (remote.Session.Subscribe) can carry them to the member that
// subscribes: the cursor FromCursor gave (fromCursor false when none
// did) and MaxAge's bound (nil when none did, else rounded down to the
// millisecond, as the wire carries it).
func SubscribeOptionValues(opts ...SubscribeOption) (cursor string, fromCursor bool, maxAge *time.Duration) {
	var spec eventstream.Spec
	for _, o := range opts {
		if o.set != nil {
			o.set(&spec)
		}
	}
	cursor, fromCursor = spec.Cursor.Value()
	if spec.MaxAgeMs != nil {
		d := time.Duration(*spec.MaxAgeMs) * time.Millisecond
		maxAge = &d
	}
	return cursor, fromCursor, maxAge
}

// Subscription is a host's running subscription.
type Subscription struct {
	id      string
	rt      *Runtime
	stopped atomic.Bool
	cursor  atomic.Pointer[string]
	unwatch atomic.Pointer[func() bool] // stops the context watch
}

// ID is the subscription's id, as its deliveries carry it.
func (s *Subscription) ID() string { return s.id }

// Cursor is the cursor of the last event delivered, "" before any: pass
// it to FromCursor to resume later without losing events.
func (s *Subscription) Cursor() string {
	if c := s.cursor.Load(); c != nil {
		return *c
	}
	return ""
}

// Stop ends the subscription (on the wire too). No delivery starts after
// Stop returns. Stopping twice, or after Close, does nothing.
func (s *Subscription) Stop() {
	if s.stopped.Swap(true) {
		return
	}
	if f := s.unwatch.Load(); f != nil {
		(*f)()
	}
	s.rt.sys.Events().Unsubscribe(context.Background(), s.id)
}

// Subscribe subscribes to a server's event (args: any value that marshals
// to a JSON object; nil for none) and returns once the server has
// acknowledged the stream. From then on h receives every event and every
// status change the model would have been woken for, until ctx ends, Stop
// is called, the subscription ends or fails, or Close begins: ctx bounds
// both the subscribe and the subscription's life. It is the events
// companion's subscription (docs/events.md): the same catalog check,
// activation deadline (15 s), watchdog, reconnects with backoff and a
// cursor, deduplication, and the limit of 100 subscriptions per runtime
// shared with the model's. A host's subscription is its own: the model's
// mcp_events never lists, reuses or wakes for it. A failure is an *Error
// (ErrServerNotFound, ErrInvalidArgs for an event the server does not
// offer for push, ErrTimeout, ...).
func (r *Runtime) Subscribe(ctx context.Context, server, event string, args any, h EventHandler, opts ...SubscribeOption) (*Subscription, error) {
	if !slices.Contains(r.sys.Names(), server) {
		return nil, messages.Errorf(messages.KindServerNotFound, "", "no server named %q is configured", server)
	}
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
	spec := eventstream.Spec{Server: server, Name: event, Arguments: raw}
	for _, o := range opts {
		if o.set != nil {
			o.set(&spec)
		}
	}
	s := &Subscription{rt: r}
	snap, serr := r.sys.Events().SubscribeFunc(ctx, spec, func(item *eventstream.EventItem, st *eventstream.Snapshot) {
		if s.stopped.Load() {
			return
		}
		if item != nil {
			e := item.Event
			cursor, _ := e.Cursor.Value()
			s.cursor.Store(&cursor)
			h(Delivery{Event: &Event{Subscription: item.SubscriptionID, Server: item.Server, Name: e.Name, ID: e.EventID,
				Timestamp: e.Timestamp, Cursor: cursor, Data: e.Data, ReplayTruncated: item.ReplayTruncated}})
			return
		}
		cursor, _ := st.Cursor.Value()
		h(Delivery{Status: &SubscriptionStatus{Subscription: st.ID, Server: st.Server, Name: st.Name, State: string(st.Status),
			Cursor: cursor, Truncated: st.Truncated, Error: st.Error, EndReason: string(st.EndReason)}})
	})
	if serr != nil {
		return nil, serr
	}
	s.id = snap.ID
	if c, ok := snap.Cursor.Value(); ok {
		s.cursor.Store(&c)
	}
	unwatch := context.AfterFunc(ctx, s.Stop)
	s.unwatch.Store(&unwatch)
	return s, nil
}
