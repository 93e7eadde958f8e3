package remote

import (
	"context"
	"slices"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// router is the shared runtime's Host: it hands every delivery to the
// sessions it concerns and every notice to every session.
//
// A subscription belongs to the sessions whose mcp_events subscribe made
// or reused it (the runtime reuses a live subscription of the same
// server, event and canonical arguments: the events stream is shared).
// An events or status wakeup is split by subscription: each owning
// session gets a wakeup of its own holding only its subscriptions' items
// (the batch's dropped count goes to every session that gets a part). An
// item of a subscription no session owns, and a delivery that is not a
// wakeup, go to every session.
type router struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	sessions map[string]sessionEntry          // by session actor id
	owners   map[string]map[string]*actor.PID // subscription id → its sessions (by actor id)
	order    []string                         // session actor ids in attach order
	flights  map[string]map[uint64]flight     // session actor id → its calls in flight (router_pick.go)
	lastUse  map[string]string                // server → the session whose call last named it
	seq      uint64                           // orders the calls

	send func(pid *actor.PID, m any) // set by Serve
}

type sessionEntry struct {
	pid    *actor.PID
	client string // the session process's address
}

func newRouter() *router {
	return &router{sessions: map[string]sessionEntry{}, owners: map[string]map[string]*actor.PID{},
		flights: map[string]map[uint64]flight{}, lastUse: map[string]string{}}
}

func (r *router) add(pid *actor.PID, client string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions[pid.Id] = sessionEntry{pid: pid, client: client}
	r.order = append(r.order, pid.Id)
}

// remove forgets a session (its subscriptions are released one by one
// by its actor first).
func (r *router) remove(pid *actor.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.sessions, pid.Id)
	delete(r.flights, pid.Id)
	r.order = slices.DeleteFunc(r.order, func(id string) bool { return id == pid.Id })
}

// own records that pid's session owns sub too.
func (r *router) own(sub string, pid *actor.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owners[sub] == nil {
		r.owners[sub] = map[string]*actor.PID{}
	}
	r.owners[sub][pid.Id] = pid
}

// release ends pid's share of sub; last reports that no session owns it
// any more (the runtime's subscription is then to be ended).
func (r *router) release(sub string, pid *actor.PID) (last bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	set, ok := r.owners[sub]
	if !ok {
		return false
	}
	delete(set, pid.Id)
	if len(set) > 0 {
		return false
	}
	delete(r.owners, sub)
	return true
}

func (r *router) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions)
}

// all returns every session, in attach order.
func (r *router) all() []*actor.PID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.allLocked()
}

func (r *router) allLocked() []*actor.PID {
	out := make([]*actor.PID, 0, len(r.order))
	for _, id := range r.order {
		out = append(out, r.sessions[id].pid)
	}
	return out
}

// sessionsAt returns the sessions of the process at address.
func (r *router) sessionsAt(address string) []*actor.PID {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*actor.PID
	for _, e := range r.sessions {
		if e.client == address {
			out = append(out, e.pid)
		}
	}
	return out
}

// Deliver routes a wakeup (see router).
func (r *router) Deliver(_ context.Context, m messages.HostMessage) {
	if r.send == nil {
		return
	}
	var parts []part
	switch d := m.Details.(type) {
	case eventstream.EventsDetails:
		parts = r.split(len(d.Events), func(i int) string { return d.Events[i].SubscriptionID }, d.DroppedEvents,
			func(idx []int, dropped int) (messages.HostMessage, error) {
				items := make([]*eventstream.EventItem, len(idx))
				for j, i := range idx {
					items[j] = d.Events[i]
				}
				return eventstream.EventsWakeup(items, dropped)
			})
	case eventstream.StatusDetails:
		parts = r.split(len(d.Subscriptions), func(i int) string { return d.Subscriptions[i].ID }, d.DroppedStatuses,
			func(idx []int, dropped int) (messages.HostMessage, error) {
				items := make([]eventstream.Snapshot, len(idx))
				for j, i := range idx {
					items[j] = d.Subscriptions[i]
				}
				return eventstream.StatusWakeup(items, dropped)
			})
	default:
		for _, pid := range r.all() {
			parts = append(parts, part{pid: pid, m: m})
		}
	}
	for _, p := range parts {
		r.send(p.pid, routed{deliver: &deliverMsg{Message: p.m}})
	}
}

// part is one session's share of a wakeup.
type part struct {
	pid *actor.PID
	m   messages.HostMessage
}

// split groups n items by the sessions owning their subscriptions (an
// item nobody owns goes to every session) and builds each session's
// wakeup with build; the batch's drops go to every session with a part
// (to every session when the batch has no item).
func (r *router) split(n int, sub func(int) string, dropped int, build func(idx []int, dropped int) (messages.HostMessage, error)) []part {
	r.mu.Lock()
	all := r.allLocked()
	byID := map[string][]int{}
	for i := 0; i < n; i++ {
		set, owned := r.owners[sub(i)]
		for _, pid := range all {
			if !owned || set[pid.Id] != nil {
				byID[pid.Id] = append(byID[pid.Id], i)
			}
		}
	}
	r.mu.Unlock()
	var out []part
	for _, pid := range all { // attach order: deterministic
		idx := byID[pid.Id]
		if len(idx) == 0 && (n > 0 || dropped == 0) {
			continue
		}
		m, err := build(idx, dropped)
		if err != nil {
			continue // the runtime encoded these items already: cannot fail
		}
		out = append(out, part{pid: pid, m: m})
	}
	return out
}

// Notify hands a notice to every session.
func (r *router) Notify(_ context.Context, n messages.Notice) {
	if r.send == nil {
		return
	}
	for _, pid := range r.all() {
		r.send(pid, routed{notify: &notifyMsg{Notice: n}})
	}
}

// routed is a delivery or notice for a session actor to forward.
type routed struct {
	deliver *deliverMsg
	notify  *notifyMsg
}
