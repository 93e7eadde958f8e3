package actors

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/supervisor"
)

// rootActor is the root supervisor. It decides what happens when a server
// actor crashes (through a pure supervisor.RestartPolicy, on the injected
// clock), hands out the concurrent start slots, and runs the ordered
// shutdown: every server stops taking work and closes its connections,
// then every actor stops.
type rootActor struct {
	env     *env
	policy  supervisor.RestartPolicy
	records []*serverRecord
	logger  *slog.Logger

	maxStarts int
	starting  int
	queue     []acquireSlot
	holders   map[slotKey]bool

	// delayed are the crashed server actors waiting for their restart
	// delay; shutdown restarts them at once instead of waiting.
	delayed map[*serverRecord]actor.Supervisor
	timers  map[*serverRecord]clock.Timer // their restart timers

	shuttingDown  bool
	pending       int
	shutdownReply func()
	watching      int
	stopped       func()
	// also are actors besides the servers that shutdown stops last and
	// waits for (the events companion).
	also []*actor.PID

	// The events actor's supervision (root_events.go).
	events evSupervision
}

// watchAlso adds an actor for the root to stop at the end of shutdown (the
// events actor, whose crashes the root decides too).
type watchAlso struct {
	pid    *actor.PID
	events *Events
}

type slotKey struct {
	id  string
	gen uint64
}

// childFailed carries a server actor's crash from the guardian strategy
// (which protoactor calls on the crashed actor's goroutine) into the root's
// mailbox, where decisions are made one at a time.
type childFailed struct {
	rec     *serverRecord
	sup     actor.Supervisor
	reason  any
	message any
}

func (r *rootActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case acquireSlot:
		k := slotKey{m.pid.Id, m.gen}
		if r.starting < r.maxStarts {
			r.starting++
			r.holders[k] = true
			c.Send(m.pid, slotGranted{gen: m.gen})
			return
		}
		r.queue = append(r.queue, m)
	case releaseSlot:
		r.release(c, slotKey{m.pid.Id, m.gen})
	case childFailed:
		r.childFailed(m)
	case restartChild:
		r.restart(m.rec)
	case watchAlso:
		r.also = append(r.also, m.pid)
		if m.events != nil {
			r.events.ev = m.events
		}
	case eventsFailed:
		r.eventsFailed(m)
	case resumeEvents:
		r.resumeEvents()
	case shutdownAll:
		r.shutdown(c, m.reply)
	case serverShutdownDone:
		r.pending--
		if r.pending == 0 {
			r.stopChildren(c)
		}
	case *actor.Stopped:
		if r.stopped != nil {
			r.stopped()
		}
	case *actor.Terminated:
		r.watching--
		if r.watching == 0 && r.shutdownReply != nil {
			reply := r.shutdownReply
			r.shutdownReply = nil
			reply()
		}
	}
}

func (r *rootActor) release(c actor.Context, k slotKey) {
	if r.holders[k] {
		delete(r.holders, k)
		r.starting--
	} else {
		for i, q := range r.queue {
			if (slotKey{q.pid.Id, q.gen}) == k {
				r.queue = append(r.queue[:i], r.queue[i+1:]...)
				return
			}
		}
		return
	}
	for r.starting < r.maxStarts && len(r.queue) > 0 {
		next := r.queue[0]
		r.queue = r.queue[1:]
		r.starting++
		r.holders[slotKey{next.pid.Id, next.gen}] = true
		c.Send(next.pid, slotGranted{gen: next.gen})
	}
}
