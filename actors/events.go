package actors

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/extension"
	"github.com/mcprt/mcprt/messages"
)

// The events companion: MCP events (events/list, events/stream) built on
// the protocol-extension API like any other companion. The events actor
// keeps the subscription records (at most MaxSubscriptions, identical
// live subscriptions reused), one shared events session per server (so
// the subscriptions of a server share one reconnect), and spawns a
// subscription actor per logical subscription; two batcher actors turn
// deliveries into host wakeups.

const (
	methodEventsList   = "events/list"
	methodEventsStream = "events/stream"
	// MaxSubscriptions bounds the subscriptions recorded per runtime
	// (live or ended, until unsubscribed).
	MaxSubscriptions = 100
)

// EventsDefinition is the events companion's protocol registration.
var EventsDefinition = extension.Definition{
	Namespace: "events",
	Requests:  []string{methodEventsList},
	Streams:   []string{methodEventsStream},
	Notifications: []string{"notifications/events/active", "notifications/events/event",
		"notifications/events/heartbeat", "notifications/events/error", "notifications/events/terminated"},
}

// subRecord is one recorded subscription.
type subRecord struct {
	id, key string
	spec    eventstream.Spec
	pid     *actor.PID
	pub     published
	// abort is the Done channel of the subscribe that started it (an
	// evAbort with it cancels the subscription), until another subscribe
	// reused it (nil then).
	abort <-chan struct{}
	// state is its actor's state, kept across the actor's restarts;
	// crashes are the actor's recent crash times (the crash policy's).
	state   *subState
	crashes []time.Time
}

// published is what a subscription actor publishes for listing, without
// being messaged: its latest snapshot and its frame counters.
type published struct {
	snap                                        atomic.Pointer[eventstream.Snapshot]
	delivered, duplicates, invalid, late, opens atomic.Uint64
}

// setStats publishes st.
func (p *published) setStats(st eventstream.Stats) {
	p.delivered.Store(st.Delivered)
	p.duplicates.Store(st.Duplicates)
	p.invalid.Store(st.Invalid)
	p.late.Store(st.Late)
	p.opens.Store(st.Opens)
}

// loadStats returns the published counters.
func (p *published) loadStats() *eventstream.Stats {
	return &eventstream.Stats{Delivered: p.delivered.Load(), Duplicates: p.duplicates.Load(),
		Invalid: p.invalid.Load(), Late: p.late.Load(), Opens: p.opens.Load()}
}

func (r *subRecord) snapshot() eventstream.Snapshot {
	if p := r.pub.snap.Load(); p != nil {
		return *p
	}
	return eventstream.Snapshot{ID: r.id, Server: r.spec.Server, Name: r.spec.Name, Arguments: r.spec.Arguments,
		Cursor: r.spec.Cursor, Status: eventstream.StateOpening, MaxAgeMs: r.spec.MaxAgeMs}
}

// eventsSession is the shared events session of one server.
type eventsSession struct {
	h       *Session
	binding bool
	waiters []func(*Session, *messages.Error)
}

// Messages of the events actor.
type (
	evCatalog struct {
		server string
		reply  func([]eventstream.Descriptor, *messages.Error)
	}
	evSubscribe struct {
		spec  eventstream.Spec
		abort <-chan struct{} // closed when the caller gives up
		reply func(eventstream.Snapshot, *messages.Error)
		// handler, when set, receives the subscription's deliveries
		// instead of the batchers (a host's typed subscription).
		handler EventHandler
	}
	// evAbort cancels what the subscribe whose caller gave up (abort)
	// started.
	evAbort       struct{ abort <-chan struct{} }
	evUnsubscribe struct {
		id    string
		reply func()
	}
	evList     struct{ reply func([]eventstream.Snapshot) }
	evShutdown struct{ reply func() }
	// needSession asks for the server's shared events session.
	needSession struct {
		server string
		reply  func(*Session, *messages.Error)
	}
	sessionBound struct {
		server string
		h      *Session
		err    *messages.Error
	}
	catalogPage struct {
		f     *catalogFetch
		h     *Session
		reply messages.Reply
	}
)

// catalogFetch is one events/list pagination in progress.
type catalogFetch struct {
	pager  eventstream.Pager
	done   func([]eventstream.Descriptor, *messages.Error)
	server string
	origin messages.Origin
	cursor string // of the page asked for
	// rebinds counts the pages sent again on a fresh session because the
	// one they were given had gone (see messages.Reply.NotSent).
	rebinds int
}

type eventsActor struct {
	env         *env
	proto       *Protocol
	me          *actor.PID
	batches     batchPIDs
	notify      func(messages.Notice)
	deliver     func(messages.HostMessage)
	batchLimits eventstream.BatchLimits
	limits      eventstream.Limits
	subs        []*subRecord
	sessions    map[string]*eventsSession
	closed      bool
	stopped     *atomic.Bool

	// Supervision (events_supervise.go): the batchers' crash histories,
	// the timers of children waiting for their restart, and this actor's
	// own crash.
	batchCrashes map[string][]time.Time
	restarts     map[string]clock.Timer
	crash        crashNote
	stopping     bool // this actor is stopping: no child restarts any more
}

func (a *eventsActor) Receive(c actor.Context) {
	msg := c.Message()
	retry, isRetry := msg.(evRetry)
	if isRetry {
		msg = retry.msg
	}
	defer func() {
		if r := recover(); r != nil {
			a.crashed(msg, isRetry, r)
			panic(r) // supervised by the root (the guardian)
		}
	}()
	a.env.maybeCrash(messages.ActorEvents, msg)
	switch m := msg.(type) {
	case *actor.Started:
		a.me = c.Self()
		evp, _ := newBatchActor(a.env, eventstream.NewEventBatcher(a.batchLimits), a.deliver, a.stopped)
		stp, _ := newBatchActor(a.env, eventstream.NewStatusBatcher(a.batchLimits), a.deliver, a.stopped)
		a.batches = batchPIDs{
			events: c.SpawnPrefix(a.env.props(evp), "batch-events"),
			status: c.SpawnPrefix(a.env.props(stp), "batch-status"),
		}
	case evCatalog:
		if a.closed {
			m.reply(nil, shutdownErr(m.server))
			return
		}
		a.fetchCatalog(m.server, messages.OriginModel, m.reply)
	case evSubscribe:
		a.subscribe(c, m)
	case evUnsubscribe:
		a.unsubscribe(c, m.id)
		m.reply()
	case evAbort:
		for _, r := range append([]*subRecord(nil), a.subs...) {
			if m.abort != nil && r.abort == m.abort {
				a.unsubscribe(c, r.id)
			}
		}
	case evList:
		out := make([]eventstream.Snapshot, 0, len(a.subs))
		for _, r := range a.subs {
			if r.key == "" {
				continue // a host's typed subscription: not the model's to see
			}
			snap := r.snapshot()
			snap.Stats = r.pub.loadStats()
			out = append(out, snap)
		}
		m.reply(out)
	case needSession:
		if a.closed {
			m.reply(nil, shutdownErr(m.server))
			return
		}
		a.withSession(m.server, messages.OriginInternal, m.reply)
	case sessionBound:
		a.bound(m)
	case catalogPage:
		a.page(m)
	case evShutdown:
		a.shutdown(c)
		m.reply()
	case *actor.Stopping:
		a.stopping = true
		a.stopRestarts()
	}
}

func shutdownErr(server string) *messages.Error {
	return messages.Errorf(messages.KindShutdown, server, "the runtime is shutting down")
}

func (a *eventsActor) subscribe(c actor.Context, m evSubscribe) {
	server := m.spec.Server
	if a.closed {
		m.reply(eventstream.Snapshot{}, shutdownErr(server))
		return
	}
	canon, err := eventstream.Canonical(m.spec.Arguments)
	if err != nil {
		m.reply(eventstream.Snapshot{}, messages.Errorf(messages.KindInvalidArgs, server, "arguments: %s", err))
		return
	}
	key := server + "\x00" + m.spec.Name + "\x00" + canon
	if m.handler != nil {
		key = "" // a host's typed subscription is its own: never reused
	}
	for _, r := range a.subs {
		if key == "" {
			break
		}
		if st := r.snapshot().Status; r.key == key && (st == eventstream.StateActive || st == eventstream.StateReconnecting) {
			r.abort = nil
			m.reply(r.snapshot(), nil) // an identical live subscription is reused
			return
		}
	}
	if len(a.subs) >= MaxSubscriptions {
		m.reply(eventstream.Snapshot{}, limitErr(server))
		return
	}
	a.fetchCatalog(server, messages.OriginModel, func(events []eventstream.Descriptor, err *messages.Error) {
		if err != nil {
			m.reply(eventstream.Snapshot{}, err)
			return
		}
		if _, ferr := eventstream.FindPush(events, m.spec.Name); ferr != nil {
			kind := messages.KindInvalidArgs
			if !errors.Is(ferr, eventstream.ErrNoPush) && !errors.Is(ferr, eventstream.ErrUnknownEvent) {
				kind = messages.KindProtocol
			}
			m.reply(eventstream.Snapshot{}, messages.Errorf(kind, server, "%s", ferr))
			return
		}
		a.start(c, m, key)
	})
}

func limitErr(server string) *messages.Error {
	return messages.Errorf(messages.KindInvalidArgs, server, "at most %d event subscriptions per runtime; unsubscribe some first", MaxSubscriptions)
}

// start spawns the subscription's actor; the subscribe is answered when
// the server acknowledges its first stream (or it fails).
func (a *eventsActor) start(c actor.Context, m evSubscribe, key string) {
	if a.closed {
		m.reply(eventstream.Snapshot{}, shutdownErr(m.spec.Server))
		return
	}
	select {
	case <-m.abort: // the caller gave up while the catalog was fetched
		m.reply(eventstream.Snapshot{}, messages.Errorf(messages.KindAborted, m.spec.Server, "cancelled by the caller"))
		return
	default:
	}
	if len(a.subs) >= MaxSubscriptions {
		m.reply(eventstream.Snapshot{}, limitErr(m.spec.Server))
		return
	}
	spec := m.spec
	spec.ID = "sub-" + clock.HexID(a.env.rand, 8)
	sub, err := eventstream.NewSubscription(spec, a.limits)
	if err != nil {
		m.reply(eventstream.Snapshot{}, messages.Errorf(messages.KindInvalidArgs, spec.Server, "%s", err))
		return
	}
	rec := &subRecord{id: spec.ID, key: key, spec: spec, abort: m.abort}
	a.subs = append(a.subs, rec)
	me := a.me
	reply := func(snap eventstream.Snapshot, why string) {
		if why == "" {
			m.reply(snap, nil)
			return
		}
		a.env.send(me, evUnsubscribe{id: rec.id, reply: func() {}}) // a failed subscribe leaves no record
		// The stream's error names the server already; Errorf adds it.
		why = strings.TrimPrefix(why, fmt.Sprintf("server %q: ", spec.Server))
		m.reply(snap, messages.Errorf(rejectKind(snap.EndReason), spec.Server, "%s", why))
	}
	rec.state = newSubState(a.env, a.me, a.batches, a.notify, sub, spec, &rec.pub, reply)
	rec.state.handler = m.handler
	st := rec.state
	rec.pid = c.SpawnPrefix(a.env.props(func() actor.Actor { return &subActor{st} }), "sub")
}

// rejectKind classifies a subscribe that failed before the server's
// acknowledgement by how its stream ended: the caller gave up, the
// connection (or the activation wait) was lost, or the server answered
// the stream (a refusal, or a result) instead of acknowledging it.
func rejectKind(r messages.EndReason) messages.ErrorKind {
	switch r {
	case messages.EndCancelled:
		return messages.KindAborted
	case messages.EndDisconnected:
		return messages.KindDisconnected
	case messages.EndError, messages.EndEnded:
		return messages.KindProtocol
	}
	return messages.KindConnectFailed
}

func (a *eventsActor) unsubscribe(c actor.Context, id string) {
	for i, r := range a.subs {
		if r.id != id {
			continue
		}
		a.subs = append(a.subs[:i], a.subs[i+1:]...)
		a.stopRestart(r.pid)
		a.env.send(r.pid, subCancel{reply: func(eventstream.Snapshot) {}})
		c.Stop(r.pid)
		a.releaseSession(r.spec.Server)
		return
	}
}

// shutdown cancels every subscription and clears both batchers: nothing
// more wakes the host.
func (a *eventsActor) shutdown(c actor.Context) {
	if a.closed {
		return
	}
	a.closed = true
	a.stopped.Store(true)
	a.stopRestarts()
	for _, r := range a.subs {
		a.env.send(r.pid, subCancel{reply: func(eventstream.Snapshot) {}})
		c.Stop(r.pid)
	}
	a.subs = nil
	for _, pid := range []*actor.PID{a.batches.events, a.batches.status} {
		a.env.send(pid, batchClear{reply: func() {}})
	}
	for server, es := range a.sessions {
		for _, w := range es.waiters {
			w(nil, shutdownErr(server))
		}
		es.waiters = nil
	}
	a.proto.Dispose()
}
