package simtests

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/eventstream"
)

// A simulated attached session: the session process's side of remote's
// Session (remote/attach.go), reduced to what the member's rules see. It
// sends requests, cancels, a heartbeat every second and its detach up its
// hop; every call gets exactly one outcome here: the member's reply, or a
// local failure when the session cancels it, detaches, is told it ended,
// or hears nothing from the member for the session timeout (it then stops,
// as remote's Session does).

// sharedReq is a session's request, as the member's shell runs it.
type sharedReq struct {
	kind   string // call, subscribe, unsubscribe, list, status
	server string
	tool   string // call: the tool; subscribe: the event's name
	args   string // call, subscribe: JSON ("" for none)
	sub    string // unsubscribe: the subscription
	key    uint64 // typed, typedstop: the typed subscription's key
}

func (r *sharedReq) String() string {
	s := r.kind
	for _, p := range []string{r.server, r.tool, r.args, r.sub} {
		if p != "" {
			s += " " + p
		}
	}
	if r.key != 0 {
		s += fmt.Sprintf(" key %d", r.key)
	}
	return s
}

// sessCall is one call of a session.
type sessCall struct {
	req     *sharedReq
	done    bool
	replied bool // its outcome is the member's reply
	outcome string
	// A list's: what the session owned when it sent it, and where its
	// gains stood (the member filters the answer by what it owns when the
	// list reaches it, later).
	owned  map[string]bool
	gained int
}

// sessSub is a subscription the session owns, as it knows it.
type sessSub struct {
	id, server, name string
	join             int // the type's emitted count when the member made the session an owner
}

// simSession is one attached session.
type simSession struct {
	sw      *sharedWorld
	name    string
	hop     *hop
	next    uint64
	calls   map[uint64]*sessCall
	gone    string // why the session stopped ("" while it works)
	heard   time.Duration
	beat    clock.Timer
	subs    map[string]*sessSub        // owned, by subscription id
	left    map[string]uint64          // subscription → the id of the last unsubscribe of it sent
	gains   []string                   // every subscription it became an owner of, in order
	got     map[string]map[string]bool // subscription id → event ids delivered
	dropped int                        // dropped_events of its wakeups, summed
	typed   map[uint64]bool            // the typed subscriptions it holds, by key (shared_typed.go)
	nextKey uint64
}

// request sends a request up the hop; it returns the call's id.
func (s *simSession) request(r *sharedReq) uint64 {
	s.next++
	id := s.next
	c := &sessCall{req: r}
	s.calls[id] = c
	if r.kind == "list" {
		c.owned, c.gained = map[string]bool{}, len(s.gains)
		for sub := range s.subs {
			c.owned[sub] = true
		}
	}
	if r.kind == "typedstop" {
		delete(s.typed, r.key)
	}
	if r.kind == "unsubscribe" {
		// The member releases the session's share when the request
		// reaches it, whatever happens to the call after, and a subscribe
		// sent before it no longer makes the session an owner.
		delete(s.subs, r.sub)
		s.left[r.sub] = id
	}
	s.sw.w.Tracef("%s > %d %s", s.name, id, r)
	s.hop.send(&s.hop.up, hopMsg{kind: "request", id: id, req: r})
	return id
}

// cancel gives up on call id: it is answered aborted here at once, and
// the member is told.
func (s *simSession) cancel(id uint64) {
	c := s.calls[id]
	if c == nil || c.done || s.gone != "" {
		return
	}
	s.answer(id, c, "error aborted (cancelled by the session)")
	s.hop.send(&s.hop.up, hopMsg{kind: "cancel", id: id})
	if c.req.kind == "typed" { // given up: a subscription made meanwhile ends (remote's unsubscribeLater)
		s.request(&sharedReq{kind: "typedstop", key: c.req.key})
	}
}

// answer records call id's one outcome.
func (s *simSession) answer(id uint64, c *sessCall, outcome string) {
	c.done, c.outcome = true, outcome
	s.sw.w.Tracef("%s < %d %s", s.name, id, outcome)
	sharedTotals.answered.Add(1)
}

// fail stops the session: every call without an outcome gets err once.
func (s *simSession) fail(why, err string) {
	if s.gone != "" {
		return
	}
	s.gone = why
	if s.beat != nil {
		s.beat.Stop()
		s.beat = nil
	}
	s.sw.w.Tracef("%s stops: %s", s.name, why)
	for _, id := range slices.Sorted(maps.Keys(s.calls)) {
		if c := s.calls[id]; !c.done {
			s.answer(id, c, err)
		}
	}
}

// detach is the session's Close: the member is told, the calls fail here.
func (s *simSession) detach() {
	if s.gone != "" {
		return
	}
	s.hop.send(&s.hop.up, hopMsg{kind: "detach"})
	s.fail("detached", "error shutdown (the session is closed)")
}

// arm schedules the next heartbeat. The member answers every one; a
// member heard from by nothing for the session timeout is taken for gone.
func (s *simSession) arm() {
	s.beat = s.sw.w.Clock.AfterFunc(s.sw.heartbeat, func() {
		s.beat = nil
		if s.gone != "" {
			return
		}
		if quiet := s.sw.w.Now() - s.heard; quiet >= s.sw.timeout {
			s.fail("the member stopped answering", fmt.Sprintf("error disconnected (nothing heard for %s)", quiet))
			return
		}
		s.hop.send(&s.hop.up, hopMsg{kind: "heartbeat"})
		s.arm()
	})
}

// receive handles a message from the member.
func (s *simSession) receive(m hopMsg) {
	s.heard = s.sw.w.Now()
	switch m.kind {
	case "ack", "askcancel":
	case "ask":
		if s.gone == "" {
			s.hop.send(&s.hop.up, hopMsg{kind: "answer", id: m.id})
		}
	case "reply":
		c := s.calls[m.id]
		switch {
		case c == nil:
			s.sw.w.violate("session %s: a reply to call %d, which it never made", s.name, m.id)
		case !c.done:
			c.replied = true
			s.answer(m.id, c, m.res.String())
			s.replied(c, m)
		case c.replied:
			s.sw.w.violate("session %s: call %d answered twice", s.name, m.id)
		case c.req.kind == "subscribe" && m.res.ok && len(m.res.snaps) == 1 && s.gone == "":
			// A subscribe it gave up on that the runtime made anyway: the
			// member may have made it an owner before the cancel arrived
			// (a list on its way may show it), so it lets the
			// subscription go.
			s.gains = append(s.gains, m.res.snaps[0].ID)
			s.request(&sharedReq{kind: "unsubscribe", sub: m.res.snaps[0].ID})
		default: // answered here already (cancelled, detached, gave up): the late reply is dropped
		}
	case "typedgone":
		delete(s.typed, m.id)
	case "ended":
		s.fail("the member ended it: "+m.res.text, "error "+m.res.code+" ("+m.res.text+")")
	case "deliver":
		s.deliver(m.wake.Details)
	}
}

// replied notes what a reply means for the session's subscriptions.
func (s *simSession) replied(c *sessCall, m hopMsg) {
	o := m.res
	switch c.req.kind {
	case "subscribe":
		if o.ok && len(o.snaps) == 1 {
			id := o.snaps[0].ID
			// The member made the session an owner when the outcome
			// reached it (a list on its way may show it), unless the
			// session had unsubscribed from it since sending this
			// subscribe: then it owns it no longer, or never did.
			s.gains = append(s.gains, id)
			if s.subs[id] == nil && m.id > s.left[id] {
				s.subs[id] = &sessSub{id: id, server: c.req.server, name: o.snaps[0].Name, join: m.join}
			}
		}
	case "typed":
		if o.ok {
			s.typed[c.req.key] = true
		}
	case "list":
		for _, snap := range o.snaps {
			if !c.owned[snap.ID] && !slices.Contains(s.gains[c.gained:], snap.ID) {
				s.sw.w.violate("session %s: its list shows %s, which it does not own", s.name, snap.ID)
			}
		}
	}
}

// deliver checks one of the session's wakeups: no event twice.
func (s *simSession) deliver(d any) {
	switch d := d.(type) {
	case eventstream.EventsDetails:
		s.dropped += d.DroppedEvents
		var ids []string
		for _, it := range d.Events {
			if s.got[it.SubscriptionID] == nil {
				s.got[it.SubscriptionID] = map[string]bool{}
			}
			if s.got[it.SubscriptionID][it.Event.EventID] {
				s.sw.w.violate("session %s: event %s delivered twice to subscription %s", s.name, it.Event.EventID, it.SubscriptionID)
			}
			s.got[it.SubscriptionID][it.Event.EventID] = true
			ids = append(ids, it.Event.EventID)
		}
		sharedTotals.delivered.Add(int64(len(d.Events)))
		s.sw.w.Tracef("%s wake events %s dropped=%d", s.name, strings.Join(ids, ","), d.DroppedEvents)
	case eventstream.StatusDetails:
		var rows []string
		for _, it := range d.Subscriptions {
			rows = append(rows, string(it.Status))
		}
		s.sw.w.Tracef("%s wake status %s dropped=%d", s.name, strings.Join(rows, ","), d.DroppedStatuses)
	}
}
