package simtests

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/sessions"
)

// The shared runtime's faults (a session's process dying, a partition,
// the member stopping) and the invariants held per session
// (docs/simulation.md, "The shared runtime"):
//   - every call is answered exactly once: the member answers each request
//     it received while the session lived once (a reply, or the session's
//     end), and the session gets one outcome per call (a second reply is a
//     violation);
//   - no event reaches a session twice for one subscription; every event
//     of a subscription the session owns, emitted after it joined, reaches
//     it or is counted in its dropped_events (at checkpoints);
//   - a session's end releases its leases (every call of it still running
//     is cancelled; once quiet, the rules hold no call of an ended session)
//     and its subscription shares: the runtime's subscription ends exactly
//     when its last owner leaves (checked against a model of the owners
//     kept here), and at checkpoints every live runtime subscription has an
//     owner and every session's own view matches the model;
//   - a session's list shows only its own subscriptions.
//
// One session's detach never closing a connection another uses is the
// runtime's invariant 4 (no connection closed with a request outstanding),
// which holds in every shared run too.

// kill is a session's process dying: its connection breaks, and the member
// hears of it (protoactor's endpoint terminated event) a moment later.
func (s *sharedWorld) kill(sid string) {
	ss := s.sessions[sid]
	if ss == nil || ss.gone != "" {
		return
	}
	ss.hop.cut("the session's process died")
	ss.fail("its process died", "error (the process died)")
	s.kills = append(s.kills, s.w.Clock.AfterFunc(10*time.Millisecond, func() {
		s.inbox = append(s.inbox, func() {
			s.end(sid, func() []sessions.Effect { return s.core.End(sid, "its connection ended", true) })
		})
	}))
}

// partition cuts a session off (both ways) for d, then heals.
func (s *sharedWorld) partition(sid string, d time.Duration) {
	ss := s.sessions[sid]
	if ss == nil || ss.hop.broken || ss.hop.held {
		return
	}
	ss.hop.partition()
	if d > 0 {
		ss.hop.healing = s.w.Clock.AfterFunc(d, ss.hop.heal)
	}
}

// shutdown is the member stopping (remote's Server.Close, before the
// runtime closes): every session ends, every link breaks, and each
// session fails its calls once.
func (s *sharedWorld) shutdown() {
	if s.closed {
		return
	}
	for _, p := range s.posts { // the outcomes on their way arrive first
		p.t.Stop()
		s.inbox = append(s.inbox, p.f)
	}
	s.posts = nil
	s.pump()
	s.w.Tracef("member stops")
	s.closed = true // nothing more is routed; outcomes reach the rules at once
	for _, sid := range s.core.Sessions() {
		s.end(sid, func() []sessions.Effect { return s.core.End(sid, "the serving runtime is stopping", false) })
	}
	for _, sid := range s.order {
		ss := s.sessions[sid]
		ss.hop.cut("the member stopped")
		ss.fail("the member stopped", "error disconnected (the shared runtime is gone)")
	}
	for _, sid := range keys(s.timers) {
		for _, t := range s.timers[sid] {
			t.t.Stop()
		}
	}
	for _, t := range s.kills {
		t.Stop()
	}
	// What the member and its hops queued runs now (each does nothing more
	// than take a message a broken hop dropped, or queue an input the
	// member takes at once): nothing of it may be queued once Close
	// returns. The runtime's activations queued at this instant may run
	// meanwhile, as if Close began a moment later.
	for s.acts > 0 {
		if ran, err := s.w.step(false); err != nil || !ran {
			break
		}
		s.w.quiet()
	}
	s.timers = map[string][]*liveTimer{}
}

// quietCheck runs with nothing in flight: the rules hold no call of an
// ended session, and every call they hold has a host operation running.
func (s *sharedWorld) quietCheck() {
	s.typedQuiet()
	for _, sid := range s.order {
		if ids := s.core.InFlight(sid); len(ids) > 0 {
			s.w.violate("member: session %s (ended=%v) still holds call(s) %v with nothing in flight", sid, s.ended[sid], ids)
		}
	}
}

// afterClose checks, once Close has returned, that every call the member
// received while its session lived was answered exactly once, and every
// call of every session has its one outcome.
func (s *sharedWorld) afterClose() {
	s.checkAsks()
	for _, sid := range s.order {
		for _, id := range slices.Sorted(maps.Keys(s.calls[sid])) {
			if c := s.calls[sid][id]; c.answers != 1 {
				s.w.violate("member: %s's call %d (%s) answered %d times", sid, id, c.req, c.answers)
			}
		}
		for _, id := range slices.Sorted(maps.Keys(s.sessions[sid].calls)) {
			if !s.sessions[sid].calls[id].done {
				s.w.violate("session %s: call %d has no outcome after Close", sid, id)
			}
		}
	}
}

// account is the per-session checkpoint: subs is the runtime's list of
// subscriptions, taken with nothing in flight and every batch flushed.
func (s *sharedWorld) account(subs []eventstream.Snapshot) {
	e := s.w.inv.ev()
	snaps := map[string]eventstream.Snapshot{}
	for _, snap := range subs {
		snaps[snap.ID] = snap
		if snap.Status.Live() && len(s.own[snap.ID]) == 0 && s.w.Host.subs[snap.ID] != nil {
			s.w.violate("member: runtime subscription %s is %s, but no session owns it (its last owner left without ending it)", snap.ID, snap.Status)
		}
	}
	for _, sid := range s.order {
		ss := s.sessions[sid]
		if ss.gone != "" || !s.core.Live(sid) || ss.hop.held {
			continue
		}
		var model []string
		for _, sub := range keys(s.own) {
			if s.own[sub][sid] {
				model = append(model, sub)
			}
		}
		s.typedView(ss)
		if got := describeSubs(ss.subs); got != strings.Join(model, ",") {
			s.w.violate("session %s: believes it owns [%s], the member's owners say [%s]", sid, got, strings.Join(model, ","))
		}
		missing := 0
		var where []string
		for _, id := range keys(ss.subs) {
			sub, snap := ss.subs[id], snaps[id]
			hs := s.w.Host.subs[id]
			if hs == nil || snap.Status != eventstream.StateActive || !s.w.inv.settled(sub.server) {
				continue
			}
			sharedTotals.accounted.Add(1)
			k := evKey(snap.Server, snap.Name)
			n := 0
			for seq := max(hs.start, sub.join) + 1; seq <= e.emitted[k]; seq++ {
				if !e.excused[k][seq] && !ss.got[id]["e"+strconv.Itoa(seq)] {
					n++
				}
			}
			if n > 0 {
				missing += n
				where = append(where, id+":"+strconv.Itoa(n))
			}
		}
		if missing > ss.dropped {
			s.w.violate("session %s: %d event(s) emitted after it joined were neither delivered to it nor counted in its dropped_events (%d counted) [%s]",
				sid, missing, ss.dropped, strings.Join(where, " "))
		}
	}
}

// checkUnsubs compares the runtime subscriptions effs end with want.
func (s *sharedWorld) checkUnsubs(what string, effs []sessions.Effect, want []string) {
	got := []string{}
	for _, e := range effs {
		if e.Kind == sessions.Unsubscribe {
			got = append(got, e.Sub)
		}
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		s.w.violate("member: %s ended runtime subscription(s) %v, want %v (those whose last owner left)", what, got, want)
	}
}

// sharedTotals counts what the shared campaigns did (TestSim reports it).
var sharedTotals struct {
	sessions, answered, delivered, dropped, ended, accounted, questions, reruns, refused, typed atomic.Int64
}
