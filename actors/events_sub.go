package actors

import (
	"encoding/json"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// subActor runs one logical events subscription: decisions come from
// eventstream.Subscription; it opens its streams on the server's shared
// events session (which the events actor keeps, so all subscriptions of a
// server share one reconnect), and executes the timers, deliveries and
// answers the state machine asks for. Everything it keeps is its
// record's subState, so an actor restarted after a crash goes on from
// the last accepted cursor with the same dedupe window, streams and timer.
type subActor struct{ *subState }

// subState is a subscription actor's state; it lives with the record.
type subState struct {
	env     *env
	events  *actor.PID // the events actor
	batches batchPIDs
	notify  func(messages.Notice)
	sub     *eventstream.Subscription
	spec    eventstream.Spec
	me      *actor.PID
	timer   timerSlot
	streams map[uint64]*Stream // by stream number
	waiting map[uint64]bool    // stream numbers waiting for a session
	// rebinds counts, per stream number, the opens sent again on a fresh
	// session because the one they were given had gone first.
	rebinds map[uint64]int
	reply   func(eventstream.Snapshot, string)
	last    eventstream.Snapshot
	// pub is where the subscription's latest snapshot and counters are
	// published for listing, without messaging it.
	pub *published
	// handler, when set, takes the deliveries and wakes instead of the
	// batchers (a host's typed subscription).
	handler EventHandler
	// frameDone is the credit of the frame being handled; a delivery takes
	// it along to the batcher, so the window covers every queue up to it.
	frameDone func()

	// Supervision: started once the first incarnation started; crash is
	// the panic of the last crash; endWhy, set by the events actor when
	// the crash policy ends it, fails the subscription as it stops.
	started bool
	crash   crashNote
	endWhy  string
}

type batchPIDs struct{ events, status *actor.PID }

// Messages of a subscription actor.
type (
	subFrame struct {
		stream uint64
		frame  eventstream.Frame
		done   func() // returns the frame's credit (see StreamWindow)
	}
	subStreamEnded struct {
		stream uint64
		end    messages.End
		params eventstream.StreamParams // the open's, to send it again
	}
	subTimer   struct{ token uint64 }
	subSession struct {
		stream uint64
		params eventstream.StreamParams
		h      *Session
		err    *messages.Error
	}
	subCancel struct{ reply func(eventstream.Snapshot) }
)

func newSubState(e *env, events *actor.PID, b batchPIDs, notify func(messages.Notice), sub *eventstream.Subscription, spec eventstream.Spec,
	pub *published, reply func(eventstream.Snapshot, string)) *subState {
	return &subState{env: e, events: events, batches: b, notify: notify, sub: sub, spec: spec,
		streams: map[uint64]*Stream{}, waiting: map[uint64]bool{}, rebinds: map[uint64]int{}, reply: reply, pub: pub}
}

func (a *subState) now() time.Time { return a.env.clock.Now() }

func (a *subActor) Receive(c actor.Context) {
	msg := c.Message()
	defer func() {
		if r := recover(); r != nil {
			a.crash.note(r)
			if !lifecycleMessage(msg) {
				// The restarted actor takes this message again, first; a
				// message that always crashes ends the subscription once
				// the policy gives up.
				c.Stash()
			}
			panic(r)
		}
	}()
	a.env.maybeCrash(messages.ActorSubscription, msg)
	switch m := msg.(type) {
	case *actor.Started:
		a.me = c.Self()
		if !a.started { // a restart goes on from the state it keeps
			a.started = true
			a.exec(a.sub.Start())
		}
	case subFrame:
		a.frameDone = m.done
		a.exec(a.sub.Frame(a.now(), m.stream, m.frame))
		if a.frameDone != nil { // nothing to deliver: the frame is done
			a.frameDone()
			a.frameDone = nil
		}
	case subStreamEnded:
		if a.reopen(m) {
			return
		}
		delete(a.streams, m.stream)
		delete(a.rebinds, m.stream)
		a.exec(a.sub.StreamEnded(m.stream, m.end))
	case subTimer:
		a.exec(a.sub.Fire(a.now(), m.token))
	case subSession:
		a.sessionReady(m)
	case subCancel:
		a.exec(a.sub.Cancel())
		m.reply(a.sub.Snapshot())
	case *actor.Stopping:
		if a.endWhy != "" {
			a.exec(a.sub.Abort(a.endWhy))
		} else {
			a.exec(a.sub.Cancel())
		}
		a.timer.stop()
	}
	a.publish()
}

// publish makes the latest snapshot and counters visible to listing.
func (a *subState) publish() {
	if snap := a.sub.Snapshot(); !sameSnapshot(snap, a.last) {
		a.last = snap
		a.pub.snap.Store(&snap)
	}
	a.pub.setStats(a.sub.Stats())
}

// sameSnapshot compares what changes in a subscription's snapshot.
func sameSnapshot(a, b eventstream.Snapshot) bool {
	return a.Status == b.Status && a.Cursor == b.Cursor && a.Truncated == b.Truncated &&
		a.Error == b.Error && a.EndReason == b.EndReason && a.ID == b.ID
}

// sessionReady opens a stream that waited for the server's session; a
// failed connect ends that stream (which costs the subscription one
// attempt, as a failed reconnect does).
func (a *subState) sessionReady(m subSession) {
	if !a.waiting[m.stream] {
		return // cancelled meanwhile
	}
	delete(a.waiting, m.stream)
	if m.err != nil {
		delete(a.rebinds, m.stream)
		a.exec(a.sub.StreamEnded(m.stream, messages.End{Reason: messages.EndError, Error: m.err.Error()}))
		return
	}
	params, _ := json.Marshal(m.params)
	me, n, sp := a.me, m.stream, m.params
	a.streams[n] = m.h.OpenStreamDeferred(methodEventsStream, params,
		func(method string, p json.RawMessage, done func()) error {
			a.env.send(me, subFrame{stream: n, frame: eventstream.Decode(method, p), done: done})
			return nil
		},
		func(end messages.End) { a.env.send(me, subStreamEnded{stream: n, end: end, params: sp}) })
}

// reopen asks again for a session for a stream whose open never left
// (its session had gone first: see messages.End.NotSent), at most
// maxRebinds times: that costs the subscription no attempt, since the
// server never saw it. It reports whether it did.
func (a *subState) reopen(m subStreamEnded) bool {
	if !m.end.NotSent || a.streams[m.stream] == nil || a.rebinds[m.stream] >= maxRebinds {
		return false
	}
	a.rebinds[m.stream]++
	delete(a.streams, m.stream)
	a.askSession(m.stream, m.params)
	return true
}

// askSession asks the events actor for the server's session for stream n.
func (a *subState) askSession(n uint64, params eventstream.StreamParams) {
	a.waiting[n] = true
	me := a.me
	a.env.send(a.events, needSession{server: a.spec.Server, reply: func(h *Session, err *messages.Error) {
		a.env.send(me, subSession{stream: n, params: params, h: h, err: err})
	}})
}

func (a *subState) exec(effects []eventstream.Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case eventstream.OpenStream:
			a.askSession(e.Stream, e.Params)
		case eventstream.CancelStream:
			delete(a.waiting, e.Stream)
			delete(a.rebinds, e.Stream)
			if st := a.streams[e.Stream]; st != nil {
				st.Cancel()
				delete(a.streams, e.Stream)
			}
		case eventstream.Arm:
			a.timer.arm(a.env, e.After, a.me, subTimer{token: e.Token})
		case eventstream.Disarm:
			a.timer.stop()
		case eventstream.Deliver:
			// Published before the batch can wake the host: a host that
			// then lists sees this event's cursor and counts.
			a.publish()
			done := a.frameDone
			a.frameDone = nil
			if a.handler != nil {
				a.handler(e.Item, nil)
				if done != nil {
					done()
				}
				continue
			}
			if enc, err := eventstream.PrepareEvent(e.Item); err == nil {
				a.env.send(a.batches.events, batchAdd[*eventstream.EventItem]{item: enc, done: done})
			} else if done != nil {
				done()
			}
		case eventstream.Wake:
			a.publish() // as for Deliver: the status a wakeup tells is listed
			if a.handler != nil {
				st := e.Status
				a.handler(nil, &st)
				continue
			}
			if enc, err := eventstream.PrepareStatus(e.Status); err == nil {
				a.env.send(a.batches.status, batchAdd[eventstream.Snapshot]{item: enc})
			}
		case eventstream.Notify:
			if a.notify != nil {
				a.notify(e.Notice)
			}
		case eventstream.Resolve:
			a.publish() // before answering: an identical subscribe must see it active
			if a.reply != nil {
				a.reply(e.Status, "")
				a.reply = nil
			}
		case eventstream.Reject:
			if a.reply != nil {
				a.reply(a.sub.Snapshot(), e.Err)
				a.reply = nil
			}
		}
	}
}
