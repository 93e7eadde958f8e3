package supervisor

import (
	"sort"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// deadlines keeps one timer (TimerDeadline) for the earliest deadline of
// all the operations in flight, instead of one timer per operation: a call
// costs a clock read, not a timer. When the timer fires, every operation
// past its deadline expires (in operation-id order, so a simulation
// replays them the same way) and the timer is armed again for the next
// earliest. An operation that finishes leaves the timer alone; at worst it
// fires once for nothing.
type deadlines struct {
	slot clock.Slot
	at   time.Time // when the armed timer fires
}

// userWaits stands the call deadlines still while a request waits for a
// person (an elicitation the host is asking): time a call spends waiting
// for a person's answer does not count toward its deadline. When the last
// wait ends, every deadline in flight moves later by the time waited.
type userWaits struct {
	n     int       // requests waiting for a person now
	since time.Time // when n became positive
}

// armDeadline makes sure the timer fires no later than at.
func (s *Server) armDeadline(at time.Time) {
	d := &s.dl
	if d.slot.Armed() && !at.Before(d.at) {
		return
	}
	d.at = at
	s.emit(Arm{Kind: TimerDeadline, After: at.Sub(s.now), Token: d.slot.Arm()})
}

// deadlinesDue expires every operation past its deadline and arms the
// timer for the earliest one left.
func (s *Server) deadlinesDue(token uint64) {
	if !s.dl.slot.Fired(token) {
		return // replaced by an earlier timer since
	}
	if s.waits.n > 0 {
		return // armed again when the wait for a person ends
	}
	var due []*op
	next := time.Time{}
	for _, o := range s.ops {
		switch {
		case o.deadline.IsZero():
		case !o.deadline.After(s.now):
			due = append(due, o)
		case next.IsZero() || o.deadline.Before(next):
			next = o.deadline
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].id < due[j].id })
	for _, o := range due {
		s.expire(o)
	}
	if !next.IsZero() {
		s.armDeadline(next)
	}
}

// UserWait reports requests starting (delta > 0) or ending (delta < 0) a
// wait for a person.
func (s *Server) UserWait(now time.Time, delta int) []Effect {
	s.input(now)
	w := &s.waits
	switch {
	case delta > 0:
		if w.n == 0 {
			w.since = now
		}
		w.n += delta
	case delta < 0 && w.n > 0:
		w.n += delta
		if w.n > 0 {
			return s.out
		}
		w.n = 0
		waited := now.Sub(w.since)
		next := time.Time{}
		for _, o := range s.ops {
			if o.deadline.IsZero() {
				continue
			}
			o.deadline = o.deadline.Add(waited)
			if next.IsZero() || o.deadline.Before(next) {
				next = o.deadline
			}
		}
		if !next.IsZero() {
			s.dl.slot.Disarm()
			s.emit(Disarm{Kind: TimerDeadline})
			s.armDeadline(next)
		}
	}
	return s.out
}
