package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// The root's supervision of the events actor. A crash suspends it with
// its records (the message it was handling is posted to it again, see
// eventsActor.crashed); the crash policy resumes it after the restart
// delay, or, once its crashes exhaust the policy, ends it: the companion
// is down (every call refused with a clear error) and the root stops it.

// eventsFailed carries the events actor's crash from the guardian.
type eventsFailed struct {
	sup    actor.Supervisor
	pid    *actor.PID
	reason any
}

// resumeEvents resumes a crashed events actor now (its delay has passed,
// or shutdown begins and must not wait for it).
type resumeEvents struct{}

// evSupervision is what the root keeps about the events actor.
type evSupervision struct {
	ev      *Events
	crashes []time.Time
	// sup and pid are set while it waits for its restart delay.
	sup   actor.Supervisor
	pid   *actor.PID
	timer clock.Timer
}

func (r *rootActor) eventsFailed(m eventsFailed) {
	s := &r.events
	if r.shuttingDown || (s.ev != nil && s.ev.closing.Load()) {
		m.sup.ResumeChildren(m.pid) // at once: shutdown stops it next
		return
	}
	d, h := r.env.crashPolicy.Decide(messages.ActorEvents, s.crashes, r.env.clock.Now())
	s.crashes = h
	r.env.reportCrash(messages.ActorEvents, "", "the events companion's actor", m.reason, d)
	if d.Action == supervisor.CrashEnd {
		if s.ev != nil {
			s.ev.goDown()
		}
		m.sup.StopChildren(m.pid)
		return
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.sup, s.pid = m.sup, m.pid
	s.timer = r.env.after(d.Delay, r.env.root, resumeEvents{})
}

func (r *rootActor) resumeEvents() {
	s := &r.events
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if s.sup != nil {
		s.sup.ResumeChildren(s.pid)
		s.sup, s.pid = nil, nil
	}
}
