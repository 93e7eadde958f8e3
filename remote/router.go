package remote

import (
	"context"
	"slices"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/sessions"
)

// router is the shared runtime's Host: it hands every delivery to the
// sessions it concerns and every notice to every session.
//
// A subscription belongs to the sessions whose mcp_events subscribe made
// or reused it (the runtime reuses a live subscription of the same
// server, event and canonical arguments: the events stream is shared).
// The rules (who owns what, who gets which item, which session a
// question goes to) are package sessions'; the router holds them under
// its lock and maps session ids to actors.
// An events or status wakeup is split by subscription: each owning
// session gets a wakeup of its own holding only its subscriptions' items
// (the batch's dropped count goes to every session that gets a part). An
// item of a subscription no session owns, and a delivery that is not a
// wakeup, go to every session.
type router struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	core *sessions.Member // the sessions' rules (pure: package sessions)
	// limits are each session's (ServeOptions.SessionSubscriptions,
	// SessionCalls); another member's session has none.
	limits sessions.Limits
	pids   map[string]sessionEntry // by session actor id, while the session is live

	send func(pid *actor.PID, m any) // set by Serve
}

type sessionEntry struct {
	pid    *actor.PID
	client string // the session process's address
}

func newRouter() *router {
	return &router{core: sessions.New(), pids: map[string]sessionEntry{}}
}

// do runs one input of the sessions' rules and returns its effects, for
// the session actor to execute in order outside the lock. A Rerun, which
// may be another session's, goes to its session's actor now, under the
// lock, while the rules know the session live (rerunMsg).
func (r *router) do(f func(m *sessions.Member) []sessions.Effect) []sessions.Effect {
	r.mu.Lock()
	defer r.mu.Unlock()
	effs := f(r.core)
	reruns := false
	for _, e := range effs {
		switch e.Kind {
		case sessions.Ended:
			delete(r.pids, e.Session) // no longer routed to
		case sessions.Rerun:
			reruns = true
			if p, ok := r.pids[e.Session]; ok && r.send != nil {
				r.send(p.pid, rerunMsg{id: e.ID})
			}
		}
	}
	if reruns {
		effs = slices.DeleteFunc(effs, func(e sessions.Effect) bool { return e.Kind == sessions.Rerun })
	}
	return effs
}

// attach adds a session (its actor's Started). Another member's session
// (member) has no limits of its own: it carries the requests of that
// member's sessions, each limited there.
func (r *router) attach(pid *actor.PID, client string, member bool) []sessions.Effect {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pids[pid.Id] = sessionEntry{pid: pid, client: client}
	l := r.limits
	if member {
		l = sessions.Limits{}
	}
	return r.core.AttachWith(pid.Id, l)
}

func (r *router) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.core.Sessions())
}

// all returns every session, in attach order.
func (r *router) all() []*actor.PID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pidsLocked(r.core.Sessions())
}

func (r *router) pidsLocked(ids []string) []*actor.PID {
	out := make([]*actor.PID, 0, len(ids))
	for _, id := range ids {
		out = append(out, r.pids[id].pid)
	}
	return out
}

// sessionsAt returns the sessions of the process at address.
func (r *router) sessionsAt(address string) []*actor.PID {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*actor.PID
	for _, id := range r.core.Sessions() {
		if e := r.pids[id]; e.client == address {
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

// split groups n items by the sessions owning their subscriptions
// (sessions.Member.Split) and builds each session's wakeup with build.
func (r *router) split(n int, sub func(int) string, dropped int, build func(idx []int, dropped int) (messages.HostMessage, error)) []part {
	r.mu.Lock()
	shares := r.core.Split(n, sub, dropped)
	pids := make([]*actor.PID, len(shares))
	for i, sh := range shares {
		pids[i] = r.pids[sh.Session].pid
	}
	r.mu.Unlock()
	var out []part
	for i, sh := range shares { // attach order: deterministic
		m, err := build(sh.Items, dropped)
		if err != nil {
			continue // the runtime encoded these items already: cannot fail
		}
		out = append(out, part{pid: pids[i], m: m})
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
