package simtests

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// The simulated remote hop between a shared runtime's member and one
// attached session (docs/simulation.md, "The shared runtime"). It stands
// for remote's gRPC streams: each direction is one ordered channel
// (session → member: requests, cancels, heartbeats, the detach; member →
// session: replies, heartbeat answers, the end, deliveries), and every
// message takes a latency the seed draws, never overtaking an earlier one
// of its direction. Faults:
//   - partition: nothing crosses either way until heal; what was sent
//     meanwhile then arrives, in order (a TCP connection that stalls);
//   - break: the connection is gone (the session's process died, or the
//     member's timeout aborted the link): what is on its way and whatever
//     is sent later is dropped, and the drops are traced.
//
// Each message arrives in an activation of its own, so the seed
// interleaves hops, sessions and the runtime's actors.

// hopMsg is one message on a hop.
type hopMsg struct {
	kind string // up: request, cancel, heartbeat, detach; down: reply, ack, ended, deliver
	id   uint64 // request, cancel, reply: the call's id
	req  *sharedReq
	res  outcome              // reply
	wake messages.HostMessage // deliver
	join int                  // reply to a subscribe: the type's emitted count when the session became an owner
	due  time.Duration
	t    clock.Timer // the timer of its arrival, if it has a latency
}

// hopDir is one direction of a hop.
type hopDir struct {
	name  string // "up" or "down"
	queue []hopMsg
	last  time.Duration // due of the last message queued
	owed  int           // arrivals that came while the hop was partitioned
	recv  func(hopMsg)
}

// hop is the link of one session.
type hop struct {
	w        *World
	session  string
	up, down hopDir
	maxLat   time.Duration
	rng      *rand.Rand
	sched    func(func()) // queues an activation (sharedWorld.schedule)
	held     bool         // partitioned
	broken   bool         // gone: everything is dropped
	healing  clock.Timer
}

func newHop(w *World, session string, maxLat time.Duration, seed uint64, toMember, toSession func(hopMsg)) *hop {
	return &hop{w: w, session: session, maxLat: maxLat, rng: rand.New(rand.NewPCG(w.Seed, seed)),
		up: hopDir{name: "up", recv: toMember}, down: hopDir{name: "down", recv: toSession}}
}

// send puts m on direction d.
func (h *hop) send(d *hopDir, m hopMsg) {
	if h.broken {
		h.dropped(d, m)
		return
	}
	now := h.w.Now()
	lat := time.Duration(0)
	if h.maxLat > 0 {
		lat = time.Duration(h.rng.Int64N(int64(h.maxLat) + 1)).Truncate(time.Millisecond)
	}
	m.due = max(now+lat, d.last)
	d.last = m.due
	if m.due == now {
		d.queue = append(d.queue, m)
		h.sched(func() { h.arrive(d) })
		return
	}
	m.t = h.w.Clock.AfterFunc(m.due-now, func() { h.sched(func() { h.arrive(d) }) })
	d.queue = append(d.queue, m)
}

// arrive hands the oldest message of d to its receiver. There is one
// arrival per message sent; dues never decrease along a direction, so the
// oldest is due whenever an arrival runs.
func (h *hop) arrive(d *hopDir) {
	switch {
	case len(d.queue) == 0: // broken meanwhile: dropped already
	case h.held:
		d.owed++
	default:
		m := d.queue[0]
		d.queue = d.queue[1:]
		d.recv(m)
	}
}

// partition stops both directions until heal.
func (h *hop) partition() {
	if h.broken || h.held {
		return
	}
	h.held = true
	h.w.Tracef("hop %s partitioned", h.session)
}

// heal lets what waited through, in order.
func (h *hop) heal() {
	if !h.held {
		return
	}
	h.held = false
	h.w.Tracef("hop %s healed (%d up, %d down waiting)", h.session, len(h.up.queue), len(h.down.queue))
	for _, d := range []*hopDir{&h.up, &h.down} {
		for ; d.owed > 0; d.owed-- {
			h.sched(func() { h.arrive(d) })
		}
	}
}

// cut breaks the hop: what is on its way is dropped.
func (h *hop) cut(why string) {
	if h.broken {
		return
	}
	h.broken, h.held = true, false
	h.w.Tracef("hop %s broken (%s)", h.session, why)
	if h.healing != nil {
		h.healing.Stop()
	}
	for _, d := range []*hopDir{&h.up, &h.down} {
		for _, m := range d.queue {
			if m.t != nil {
				m.t.Stop()
			}
			h.dropped(d, m)
		}
		d.queue, d.owed = nil, 0
	}
}

// dropped traces a message the hop lost (heartbeats and their answers
// silently: they carry nothing the invariants count).
func (h *hop) dropped(d *hopDir, m hopMsg) {
	switch m.kind {
	case "heartbeat", "ack":
		return
	case "request", "cancel", "reply", "ask", "askcancel", "answer":
		h.w.Tracef("hop %s dropped %s %s %d", h.session, d.name, m.kind, m.id)
	default:
		h.w.Tracef("hop %s dropped %s %s", h.session, d.name, m.kind)
	}
	sharedTotals.dropped.Add(1)
}

// busy reports whether a message other than a heartbeat (or its answer)
// is on its way.
func (h *hop) busy() bool {
	for _, d := range []*hopDir{&h.up, &h.down} {
		for _, m := range d.queue {
			if m.kind != "heartbeat" && m.kind != "ack" {
				return true
			}
		}
	}
	return false
}

func (m hopMsg) String() string {
	if m.req != nil {
		return fmt.Sprintf("%s %d %s", m.kind, m.id, m.req)
	}
	return fmt.Sprintf("%s %d", m.kind, m.id)
}
