package remote

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/messages"
)

// router is the shared runtime's Host: it hands every delivery to the
// sessions it concerns and every notice to every session.
//
// The rule for a delivery (an events wakeup): it goes to the sessions
// that own a subscription it names (a session owns the subscriptions its
// own mcp_events subscribe calls made); one that names none it knows goes
// to every session. A wakeup that batches events of two sessions'
// subscriptions reaches both whole (per-session batchers are not done:
// docs/shared.md).
type router struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	sessions map[string]sessionEntry // by session actor id
	owners   map[string]*actor.PID   // subscription id → its session actor

	send func(pid *actor.PID, m any) // set by Serve
}

type sessionEntry struct {
	pid    *actor.PID
	client string // the session process's address
}

func newRouter() *router {
	return &router{sessions: map[string]sessionEntry{}, owners: map[string]*actor.PID{}}
}

func (r *router) add(pid *actor.PID, client string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions[pid.Id] = sessionEntry{pid: pid, client: client}
}

// remove forgets a session and the subscriptions it owned.
func (r *router) remove(pid *actor.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.sessions, pid.Id)
	for id, p := range r.owners {
		if p.Id == pid.Id {
			delete(r.owners, id)
		}
	}
}

func (r *router) own(sub string, pid *actor.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.owners[sub] = pid
}

func (r *router) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions)
}

func (r *router) all() []*actor.PID {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*actor.PID, 0, len(r.sessions))
	for _, e := range r.sessions {
		out = append(out, e.pid)
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

// targets returns the sessions a delivery naming subs goes to.
func (r *router) targets(subs []string) []*actor.PID {
	r.mu.Lock()
	seen := map[string]bool{}
	var out []*actor.PID
	for _, id := range subs {
		if p, ok := r.owners[id]; ok && !seen[p.Id] {
			seen[p.Id] = true
			out = append(out, p)
		}
	}
	r.mu.Unlock()
	if len(out) == 0 {
		return r.all()
	}
	return out
}

// Deliver routes an events wakeup (see router).
func (r *router) Deliver(_ context.Context, m messages.HostMessage) {
	if r.send == nil {
		return
	}
	for _, pid := range r.targets(subscriptionIDs(m.Details)) {
		r.send(pid, routed{deliver: &deliverMsg{Message: m}})
	}
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

// subscriptionIDs finds the subscriptions a wakeup's details name: every
// "subscription_id" (an event item's), and the "id" of every entry of a
// "subscriptions" list (a status wakeup's snapshots).
func subscriptionIDs(details any) []string {
	b, err := json.Marshal(details)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "subscription_id" {
					out = append(out, s)
				}
				if list, ok := e.([]any); ok && k == "subscriptions" {
					for _, it := range list {
						if m, ok := it.(map[string]any); ok {
							if s, ok := m["id"].(string); ok {
								out = append(out, s)
							}
						}
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
