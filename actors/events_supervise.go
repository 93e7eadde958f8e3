package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// Supervision inside the events companion. The events actor is the parent
// of the subscription and batcher actors and decides their crashes with
// the crash policy: restart after the policy's delay (a subscription goes
// on from its record's state, a batcher keeps its pending batch), or, for
// a subscription whose crashes exhausted the policy, end it as failed.
// The events actor's own crashes are the root's to decide (the guardian
// routes them): it is resumed with its records, and the message it was
// handling is handled once more, or answered with an error when that
// crashed too.

// evRetry is a message of the events actor handled again after a crash.
type evRetry struct{ msg any }

// crashed notes the events actor's crash and makes sure the message it
// was handling is not lost: it is posted again, once; when it was already
// the second try, whoever waits for it gets an error.
func (a *eventsActor) crashed(msg any, retried bool, r any) {
	a.crash.note(r)
	if lifecycleMessage(msg) {
		return
	}
	if !retried {
		a.env.send(a.me, evRetry{msg: msg})
		return
	}
	a.fail(msg, crashText(r))
}

// fail answers a message the events actor crashed on twice.
func (a *eventsActor) fail(msg any, why string) {
	errFor := func(server string) *messages.Error {
		return messages.Errorf(messages.KindInternal, server, "the events companion's actor crashed while handling this request (%s); try again", why)
	}
	switch m := msg.(type) {
	case evCatalog:
		m.reply(nil, errFor(m.server))
	case evSubscribe:
		m.reply(eventstream.Snapshot{}, errFor(m.spec.Server))
	case evUnsubscribe:
		m.reply()
	case evList:
		m.reply(nil)
	case evShutdown:
		m.reply()
	case needSession:
		m.reply(nil, errFor(m.server))
	case catalogPage:
		m.f.done(nil, errFor(m.f.server))
	case sessionBound:
		if m.h != nil {
			m.h.CloseAsync()
		}
		if es := a.sessions[m.server]; es != nil {
			es.binding = false
			ws := es.waiters
			es.waiters = nil
			for _, w := range ws {
				w(nil, errFor(m.server))
			}
		}
	}
}

// HandleFailure decides a crash of a subscription or batcher actor
// (protoactor calls it in this actor's turn, for its children).
func (a *eventsActor) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	now := a.env.clock.Now()
	if child.Equal(a.batches.events) || child.Equal(a.batches.status) {
		if a.batchCrashes == nil {
			a.batchCrashes = map[string][]time.Time{}
		}
		d, h := a.env.crashPolicy.Decide(messages.ActorBatcher, a.batchCrashes[child.Id], now)
		a.batchCrashes[child.Id] = h
		a.env.reportCrash(messages.ActorBatcher, "", "the events companion's wakeup batcher", reason, d)
		if a.closed || a.stopping {
			return // shutting down: it stops with this actor, suspended; no timer outlives Close
		}
		a.restartLater(sup, child, d)
		return
	}
	var rec *subRecord
	for _, r := range a.subs {
		if r.pid.Equal(child) {
			rec = r
		}
	}
	if rec == nil || a.closed || a.stopping { // unsubscribed or shutting down: it is being stopped
		sup.StopChildren(child)
		return
	}
	d, h := a.env.crashPolicy.Decide(messages.ActorSubscription, rec.crashes, now)
	rec.crashes = h
	what := fmt.Sprintf("subscription %s (%s on %s)'s actor", rec.id, rec.spec.Name, rec.spec.Server)
	a.env.reportCrash(messages.ActorSubscription, rec.spec.Server, what, reason, d)
	if d.Action == supervisor.CrashEnd {
		// Its actor is suspended: nothing else touches its state now.
		rec.state.endWhy = fmt.Sprintf("the subscription's actor crashed %d times within %s (%s)", d.Recent, a.env.crashPolicy.Restart.Window, crashText(reason))
		sup.StopChildren(child)
		return
	}
	if snap := rec.snapshot(); snap.Status == eventstream.StateActive || snap.Status == eventstream.StateReconnecting {
		// The model holds it: a status wakeup says it is being restarted.
		snap.Error = fmt.Sprintf("the subscription's actor crashed (%s); restarting from its last cursor", crashText(reason))
		if enc, err := eventstream.PrepareStatus(snap); err == nil {
			a.env.send(a.batches.status, batchAdd[eventstream.Snapshot]{item: enc})
		}
	}
	a.restartLater(sup, child, d)
}

// restartLater restarts child after the decision's delay.
func (a *eventsActor) restartLater(sup actor.Supervisor, child *actor.PID, d supervisor.CrashDecision) {
	if a.restarts == nil {
		a.restarts = map[string]clock.Timer{}
	}
	a.stopRestart(child)
	a.restarts[child.Id] = a.env.clock.AfterFunc(d.Delay, func() { sup.RestartChildren(child) })
}

// stopRestart forgets child's pending restart (it is being stopped).
func (a *eventsActor) stopRestart(child *actor.PID) {
	if t := a.restarts[child.Id]; t != nil {
		t.Stop()
		delete(a.restarts, child.Id)
	}
}

// stopRestarts stops every pending restart (shutdown).
func (a *eventsActor) stopRestarts() {
	for id, t := range a.restarts {
		t.Stop()
		delete(a.restarts, id)
	}
}
