package actors

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// Events is the events companion's handle: what the mcp_events tool and
// the CLI call. Its methods may be called from any goroutine.
type Events struct {
	sys     *System
	pid     *actor.PID
	stopped atomic.Bool
	// closing is set as shutdown begins, before the events actor hears of
	// it: from then on nothing reaches the host (a batch whose window
	// ends meanwhile, a notice), only a call already inside it finishes.
	closing atomic.Bool
	// down is closed when the crash policy ended the events actor (its
	// crashes exhausted the policy): every call is refused from then on.
	down     chan struct{}
	downOnce sync.Once
}

// eventsActorID is the events actor's id.
const eventsActorID = "mcprt/events"

// goDown marks the companion as ended by the crash policy.
func (ev *Events) goDown() { ev.downOnce.Do(func() { close(ev.down) }) }

// isDown reports whether the crash policy ended the companion.
func (ev *Events) isDown() bool {
	select {
	case <-ev.down:
		return true
	default:
		return false
	}
}

// startEvents registers the events protocol and spawns the events actor
// (which spawns its two batchers).
func (s *System) startEvents(cfg Config, spawner *actor.RootContext) error {
	proto, err := s.RegisterProtocol(EventsDefinition)
	if err != nil {
		return err
	}
	e := s.env
	ev := &Events{sys: s, down: make(chan struct{})}
	notify, deliver := cfg.Notify, cfg.Deliver
	if notify != nil {
		notify = func(n messages.Notice) {
			if !ev.closing.Load() {
				cfg.Notify(n)
			}
		}
	}
	if deliver != nil {
		deliver = func(m messages.HostMessage) {
			if !ev.closing.Load() {
				cfg.Deliver(m)
			}
		}
	}
	a := &eventsActor{env: e, proto: proto, notify: notify, deliver: deliver, batchLimits: cfg.EventBatch,
		limits: cfg.Events, sessions: map[string]*eventsSession{}, stopped: &ev.stopped}
	// Under the guardian: the root decides its crashes. It decides its
	// children's itself (eventsActor.HandleFailure).
	ev.pid, err = spawner.SpawnNamed(e.props(func() actor.Actor { return a }), eventsActorID)
	if err != nil {
		return err
	}
	// The root stops it (and with it every subscription and batcher) at
	// the end of shutdown, and waits for that.
	e.send(e.root, watchAlso{pid: ev.pid, events: ev})
	s.events = ev
	return nil
}

// Events returns the events companion.
func (s *System) Events() *Events { return s.events }

// call posts a command to the events actor and waits for its answer, or
// for ctx or shutdown (then it returns gone() and false; an answer that
// is already there still wins).
func callEvents[R any](ctx context.Context, ev *Events, mk func(reply func(R)) any, gone func() R) (R, bool) {
	ch := make(chan R, 1)
	var o sync.Once
	reply := func(r R) { o.Do(func() { ch <- r }) }
	if ev.stopped.Load() || ev.isDown() {
		return gone(), false
	}
	ev.sys.env.send(ev.pid, mk(reply))
	select {
	case r := <-ch:
		return r, true
	case <-ctx.Done():
	case <-ev.sys.done:
	case <-ev.down:
	}
	select {
	case r := <-ch:
		return r, true
	default:
		return gone(), false
	}
}

type catalogResult struct {
	events []eventstream.Descriptor
	err    *messages.Error
}

// Catalog lists server's events (every page, fresh).
func (ev *Events) Catalog(ctx context.Context, server string) ([]eventstream.Descriptor, *messages.Error) {
	r, _ := callEvents(ctx, ev, func(reply func(catalogResult)) any {
		return evCatalog{server: server, reply: func(d []eventstream.Descriptor, err *messages.Error) { reply(catalogResult{d, err}) }}
	}, func() catalogResult { return catalogResult{err: ev.gone(ctx, server)} })
	return r.events, r.err
}

type subResult struct {
	snap eventstream.Snapshot
	err  *messages.Error
}

// Subscribe subscribes to an event and returns once the server has
// acknowledged the stream (or it failed). An identical live subscription
// is returned instead of a new one.
func (ev *Events) Subscribe(ctx context.Context, spec eventstream.Spec) (eventstream.Snapshot, *messages.Error) {
	return ev.subscribe(ctx, spec, nil)
}

// EventHandler receives a host's typed subscription's deliveries, one at a
// time, on the subscription actor's turn (it must return promptly): an
// event (item set) or a status change that would have woken the model
// (status set).
type EventHandler func(item *eventstream.EventItem, status *eventstream.Snapshot)

// SubscribeFunc subscribes as Subscribe does (the same catalog check,
// deadlines, reconnects and limit of MaxSubscriptions), for a host: h
// receives the deliveries instead of the batchers, the subscription is
// never shared with another subscribe, and the model's list does not show
// it. h is not called once shutdown has begun.
func (ev *Events) SubscribeFunc(ctx context.Context, spec eventstream.Spec, h EventHandler) (eventstream.Snapshot, *messages.Error) {
	return ev.subscribe(ctx, spec, func(item *eventstream.EventItem, status *eventstream.Snapshot) {
		if !ev.closing.Load() {
			h(item, status)
		}
	})
}

func (ev *Events) subscribe(ctx context.Context, spec eventstream.Spec, h EventHandler) (eventstream.Snapshot, *messages.Error) {
	r, ok := callEvents(ctx, ev, func(reply func(subResult)) any {
		return evSubscribe{spec: spec, abort: ctx.Done(), handler: h, reply: func(s eventstream.Snapshot, err *messages.Error) { reply(subResult{s, err}) }}
	}, func() subResult { return subResult{err: ev.gone(ctx, spec.Server)} })
	if !ok && ctx.Err() != nil {
		// An aborted subscribe leaves nothing running: the subscription
		// it started (if any) is cancelled, on the wire too.
		ev.sys.env.send(ev.pid, evAbort{abort: ctx.Done()})
	}
	return r.snap, r.err
}

// List returns every recorded subscription.
func (ev *Events) List(ctx context.Context) []eventstream.Snapshot {
	subs, _ := callEvents(ctx, ev, func(reply func([]eventstream.Snapshot)) any { return evList{reply: reply} }, func() []eventstream.Snapshot { return nil })
	return subs
}

// Unsubscribe stops a subscription (an unknown id is not an error).
func (ev *Events) Unsubscribe(ctx context.Context, id string) {
	callEvents(ctx, ev, func(reply func(struct{})) any { return evUnsubscribe{id: id, reply: func() { reply(struct{}{}) }} }, func() struct{} { return struct{}{} })
}

// shutdown stops the companion before the servers: no wakeups after it.
func (ev *Events) shutdown(ctx context.Context) {
	ev.closing.Store(true)
	if ev.stopped.Load() {
		return
	}
	// An events actor waiting for its restart delay is resumed now.
	ev.sys.env.send(ev.sys.env.root, resumeEvents{})
	callEvents(ctx, ev, func(reply func(struct{})) any { return evShutdown{reply: func() { reply(struct{}{}) }} }, func() struct{} { return struct{}{} })
	ev.stopped.Store(true)
}

func (ev *Events) gone(ctx context.Context, server string) *messages.Error {
	if ctx.Err() != nil {
		return messages.Errorf(messages.KindAborted, server, "cancelled by the caller")
	}
	if ev.isDown() && !ev.sys.Closing() {
		return messages.Errorf(messages.KindInternal, server, "the events companion has stopped: its actor crashed too often")
	}
	return shutdownErr(server)
}
