package remote

import (
	"context"
	"encoding/json"
	"sync"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// Events of a peer's servers. A subscribe naming a peer's server is
// forwarded like any request; the subscription lives on the peer, owned
// there by this member's session on it (so sessions of this member that
// subscribe with the same identity share it, as local ones do), and owned
// here by the sessions whose subscribe made or reused it. The peer's
// wakeups reach this member's session on it (peerHost) and are split
// among the owning sessions by the router as local ones are. An
// unsubscribe of it (the last owner's, or its session's end) and a list
// go to the peer too.

// peerSubs remembers which peer runs each subscription made through one.
type peerSubs struct {
	mu sync.Mutex
	by map[string]*peerLink // guarded by mu
}

func (p *peerSubs) note(sub string, l *peerLink) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.by == nil {
		p.by = map[string]*peerLink{}
	}
	p.by[sub] = l
}

// take returns the peer running sub (nil: none) and forgets it.
func (p *peerSubs) take(sub string) *peerLink {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.by[sub]
	delete(p.by, sub)
	return l
}

// peerHost is the Host of this member's session on a peer: the peer's
// wakeups and notices go to this member's sessions through its router.
type peerHost struct{ r *router }

// Deliver gives a wakeup back its typed details (they crossed the wire as
// JSON), so the router can split it by subscription.
func (h peerHost) Deliver(ctx context.Context, m messages.HostMessage) {
	if b, err := json.Marshal(m.Details); err == nil {
		switch m.Kind {
		case eventstream.KindEvents:
			var d eventstream.EventsDetails
			if json.Unmarshal(b, &d) == nil {
				m.Details = d
			}
		case eventstream.KindStatus:
			var d eventstream.StatusDetails
			if json.Unmarshal(b, &d) == nil {
				m.Details = d
			}
		}
	}
	h.r.Deliver(ctx, m)
}

func (h peerHost) Notify(ctx context.Context, n messages.Notice) { h.r.Notify(ctx, n) }

// forwardEvents forwards an mcp_events request about a peer's
// subscription (unsubscribe) or every peer's (list); handled is false for
// the others.
func (s *Server) forwardEvents(ctx context.Context, m *requestMsg) (json.RawMessage, bool, error) {
	action, sub := eventsAction(m)
	switch action {
	case "unsubscribe":
		p := s.peerSubs.take(sub)
		if p == nil {
			return nil, false, nil
		}
		ps, err := p.session(ctx, s)
		if err != nil {
			return nil, true, err
		}
		b, err := ps.request(ctx, m.Op, m.Name, m.Args)
		return b, true, err
	case "list":
		return s.mergedList(ctx, m)
	}
	return nil, false, nil
}

// mergedList is the runtime's list with every reachable peer's (the
// session actor keeps only its own).
func (s *Server) mergedList(ctx context.Context, m *requestMsg) (json.RawMessage, bool, error) {
	t, ok := s.rt.Tool(eventsTool)
	if !ok {
		return nil, false, nil
	}
	all := []json.RawMessage{}
	add := func(res mcprt.Result) {
		var list struct {
			Subscriptions []json.RawMessage `json:"subscriptions"`
		}
		if !res.IsError && json.Unmarshal([]byte(res.Text), &list) == nil {
			all = append(all, list.Subscriptions...)
		}
	}
	add(t.Execute(ctx, m.Args))
	// The other members at once, within the bound: one that does not
	// answer is left out, as one that cannot be reached.
	for _, a := range s.askPeers(ctx, m.Op, m.Name, m.Args) {
		var res mcprt.Result
		if a.err == nil && json.Unmarshal(a.b, &res) == nil {
			add(res)
		}
	}
	text, _ := json.Marshal(map[string]any{"subscriptions": all})
	var details any
	_ = json.Unmarshal(text, &details)
	b, err := json.Marshal(mcprt.Result{Text: string(text), Details: details.(map[string]any)})
	return b, true, err
}

// endSubscription ends a subscription no session of this member owns
// any more, here or on the peer running it.
func (s *Server) endSubscription(sub string) {
	args := unsubscribeEvents(sub)
	if p := s.peerSubs.take(sub); p != nil {
		if ps, err := p.session(ctxBackground, s); err == nil {
			_, _ = ps.request(ctxBackground, opTool, eventsTool, args)
		}
		return
	}
	if t, ok := s.rt.Tool(eventsTool); ok {
		t.Execute(ctxBackground, args)
	}
}
