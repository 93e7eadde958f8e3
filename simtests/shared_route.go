package simtests

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/sessions"
)

// route splits one of the runtime's wakeups among the sessions owning
// its items, as remote's router does (an item nobody owns goes to every
// session), and sends each its share.
func (s *sharedWorld) route(m messages.HostMessage) {
	if s.closed {
		return
	}
	var parts []sessions.Part
	build := func(idx []int) (messages.HostMessage, error) { return m, nil }
	switch d := m.Details.(type) {
	case eventstream.EventsDetails:
		parts = s.core.Split(len(d.Events), func(i int) string { return d.Events[i].SubscriptionID }, d.DroppedEvents)
		build = func(idx []int) (messages.HostMessage, error) {
			items := make([]*eventstream.EventItem, len(idx))
			for j, i := range idx {
				items[j] = d.Events[i]
			}
			return eventstream.EventsWakeup(items, d.DroppedEvents)
		}
	case eventstream.StatusDetails:
		parts = s.core.Split(len(d.Subscriptions), func(i int) string { return d.Subscriptions[i].ID }, d.DroppedStatuses)
		build = func(idx []int) (messages.HostMessage, error) {
			items := make([]eventstream.Snapshot, len(idx))
			for j, i := range idx {
				items[j] = d.Subscriptions[i]
			}
			return eventstream.StatusWakeup(items, d.DroppedStatuses)
		}
	default:
		for _, sid := range s.core.Sessions() {
			parts = append(parts, sessions.Part{Session: sid})
		}
	}
	for _, p := range parts {
		if d, ok := m.Details.(eventstream.EventsDetails); ok {
			for _, i := range p.Items {
				if sub := d.Events[i].SubscriptionID; len(s.own[sub]) > 0 && !s.own[sub][p.Session] {
					s.w.violate("member: an event of %s went to session %s, which does not own it (owners %v)", sub, p.Session, keys(s.own[sub]))
				}
			}
		}
		wake, err := build(p.Items)
		if err != nil {
			s.w.violate("member: rebuilding %s's share of a wakeup: %v", p.Session, err)
			continue
		}
		ss := s.sessions[p.Session]
		ss.hop.send(&ss.hop.down, hopMsg{kind: "deliver", wake: wake})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// busy reports whether the member has work queued or a session's message
// (other than a heartbeat) is on its way: a quiesce waits for it.
func (s *sharedWorld) busy() bool {
	if len(s.inbox) > 0 || len(s.posts) > 0 {
		return true
	}
	for _, ss := range s.sessions {
		if ss.hop.busy() && !ss.hop.held {
			return true
		}
	}
	return false
}

func describeSubs(m map[string]*sessSub) string {
	var out []string
	for _, id := range keys(m) {
		out = append(out, id)
	}
	return strings.Join(out, ",")
}

// post queues an input after a delay the seed draws (none once the member
// stopped).
func (s *sharedWorld) post(f func()) {
	if s.holding && !s.closed { // (scenario files: "outcomes hold")
		s.held = append(s.held, f)
		return
	}
	if s.closed || s.w.Seed == 0 { // (scenario files: at once, in order)
		s.inbox = append(s.inbox, f)
		return
	}
	d := time.Duration(s.rng.IntN(3)) * time.Duration(1+s.rng.IntN(50)) * time.Millisecond
	if d == 0 {
		s.schedule(func() { s.inbox = append(s.inbox, f) })
		return
	}
	p := &post{f: f}
	p.t = s.w.Clock.AfterFunc(d, func() {
		s.posts = slices.DeleteFunc(s.posts, func(x *post) bool { return x == p })
		s.schedule(func() { s.inbox = append(s.inbox, f) })
	})
	s.posts = append(s.posts, p)
}

// post is an input on its way.
type post struct {
	t clock.Timer
	f func()
}

// run starts a session's call as a host operation.
func (s *sharedWorld) run(mc *memberCall) {
	if s.runTyped(mc) {
		return
	}
	h, r := s.w.Host, mc.req
	mc.op = fmt.Sprintf("%s.%d", mc.session, mc.id)
	if mc.runs > 0 {
		mc.op += fmt.Sprintf(".r%d", mc.runs)
	}
	s.ops[mc.op] = mc
	var err error
	switch r.kind {
	case "call":
		err = h.CallOn(mc.op, r.server, r.tool, r.args)
	case "subscribe":
		err = h.Subscribe(mc.op, r.server, r.tool, r.args, "", -1)
	case "unsubscribe":
		err = h.Unsubscribe(mc.op, r.sub)
	case "list":
		err = h.EventsList(mc.op, false)
	case "status":
		err = h.Status(mc.op)
	}
	if err != nil {
		s.w.violate("member: running %s: %v", mc.op, err)
	}
}

// schedule queues an activation of the member or a hop, counted so that
// the member's stop can let those queued run first (nothing of it may be
// queued once Close returns).
func (s *sharedWorld) schedule(f func()) {
	s.acts++
	s.w.Disp.Schedule(func() {
		s.acts--
		f()
	})
}

func endedOutcome(why string) outcome {
	return outcome{code: messages.KindDisconnected.Code(), text: "the shared runtime ended this session: " + why}
}

// answer sends a call's answer down its session's hop: exactly once.
func (s *sharedWorld) answer(e sessions.Effect, m hopMsg) {
	if c := s.calls[e.Session][e.ID]; c != nil {
		if c.answers++; c.answers > 1 {
			s.w.violate("member: %s's call %d answered %d times", e.Session, e.ID, c.answers)
		}
	}
	if e.Kind != sessions.Reply {
		s.w.Tracef("member %s: %s", e.Session, e)
	}
	ss := s.sessions[e.Session]
	ss.hop.send(&ss.hop.down, m)
}
