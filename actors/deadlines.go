package actors

import (
	"sort"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// deadlines keeps one clock timer for the earliest deadline of all the
// operations a server actor has in flight, instead of one timer per
// operation: a call costs a clock read, not a timer. When the timer fires,
// every operation past its deadline expires (in operation-id order, so a
// simulation replays them the same way) and the timer is re-armed for the
// next earliest. An operation that finishes leaves the timer alone; at
// worst it fires once for nothing.
type deadlines struct {
	timer clock.Timer
	at    time.Time // when the armed timer fires
	token uint64    // identifies the armed timer's message
}

// deadlineTimer is the deadline timer firing.
type deadlineTimer struct {
	incarnation uint64
	token       uint64
}

// arm makes sure the timer fires no later than at.
func (s *serverActor) armDeadline(at time.Time) {
	d := &s.deadlines
	if d.timer != nil && !at.Before(d.at) {
		return
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	d.token++
	d.at = at
	d.timer = s.env.after(at.Sub(s.now()), s.me, deadlineTimer{incarnation: s.inc, token: d.token})
}

// stopDeadlines disarms the timer.
func (s *serverActor) stopDeadlines() {
	if s.deadlines.timer != nil {
		s.deadlines.timer.Stop()
		s.deadlines.timer = nil
	}
}

// deadlinesDue expires every operation past its deadline and re-arms the
// timer for the earliest one left.
func (s *serverActor) deadlinesDue(token uint64) {
	if token != s.deadlines.token {
		return // replaced by an earlier timer since
	}
	s.deadlines.timer = nil
	if s.paused() {
		return // re-armed when the wait for a person ends
	}
	now := s.now()
	var due []*op
	next := time.Time{}
	for _, o := range s.ops {
		switch {
		case o.deadline.IsZero():
		case !o.deadline.After(now):
			due = append(due, o)
		case next.IsZero() || o.deadline.Before(next):
			next = o.deadline
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].id < due[j].id })
	for _, o := range due {
		s.opExpired(o)
	}
	if !next.IsZero() {
		s.armDeadline(next)
	}
}
