package actors

import (
	"encoding/json"

	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// The events actor's sessions and catalogs: one shared events session per
// server, bound single-flight, and the fresh paginated events/list.

// withSession runs cb with the server's live events session, binding one
// first (single-flight: every caller waiting meanwhile gets the same).
func (a *eventsActor) withSession(server string, origin messages.Origin, cb func(*Session, *messages.Error)) {
	es := a.sessions[server]
	if es == nil {
		es = &eventsSession{}
		a.sessions[server] = es
	}
	if es.h != nil {
		select {
		case <-es.h.Done():
			es.h = nil
		default:
			cb(es.h, nil)
			return
		}
	}
	es.waiters = append(es.waiters, cb)
	if es.binding {
		return
	}
	es.binding = true
	me := a.me
	a.proto.ConnectAsync(server, origin, func(h *Session, err *messages.Error) {
		a.env.send(me, sessionBound{server: server, h: h, err: err})
	})
}

func (a *eventsActor) bound(m sessionBound) {
	es := a.sessions[m.server]
	if a.closed || es == nil {
		if m.h != nil {
			m.h.CloseAsync() // a session arriving after shutdown
		}
		return
	}
	es.binding = false
	es.h = m.h
	ws := es.waiters
	es.waiters = nil
	for _, w := range ws {
		w(m.h, m.err)
	}
}

// maxRebinds bounds how often one catalog fetch or one stream is sent
// again because the session it was given had gone before it was written.
const maxRebinds = 2

// fetchCatalog lists the server's events, every page, fresh.
func (a *eventsActor) fetchCatalog(server string, origin messages.Origin, done func([]eventstream.Descriptor, *messages.Error)) {
	a.fetchPage(&catalogFetch{done: done, server: server, origin: origin})
}

// fetchPage asks for the page at f.cursor on the server's live session.
func (a *eventsActor) fetchPage(f *catalogFetch) {
	a.withSession(f.server, f.origin, func(h *Session, err *messages.Error) {
		if err != nil {
			f.done(nil, err)
			return
		}
		a.requestPage(f, h, f.cursor)
	})
}

func (a *eventsActor) requestPage(f *catalogFetch, h *Session, cursor string) {
	f.cursor = cursor
	params := json.RawMessage(`{}`)
	if cursor != "" {
		params, _ = json.Marshal(map[string]string{"cursor": cursor})
	}
	me := a.me
	h.RequestAsync(methodEventsList, params, func(r messages.Reply) { a.env.send(me, catalogPage{f: f, h: h, reply: r}) })
}

func (a *eventsActor) page(m catalogPage) {
	if m.reply.NotSent && m.reply.Err != nil && m.f.rebinds < maxRebinds && !a.closed {
		// The session had gone (its connection ended) before the request
		// reached it: nothing was sent, so ask again on a fresh one.
		m.f.rebinds++
		a.fetchPage(m.f)
		return
	}
	if m.reply.Err != nil {
		m.f.done(nil, m.reply.Err)
		return
	}
	next, done, err := m.f.pager.Page(m.reply.Result)
	switch {
	case err != nil:
		m.f.done(nil, messages.Errorf(messages.KindProtocol, m.h.Server(), "%s", err))
	case done:
		m.f.done(m.f.pager.Events(), nil)
	default:
		a.requestPage(m.f, m.h, next)
	}
}

// releaseSession closes a server's events session once no subscription
// on it is live (the shared connection stays, under its own lifecycle).
func (a *eventsActor) releaseSession(server string) {
	for _, r := range a.subs {
		if r.spec.Server == server && r.snapshot().Status.Live() {
			return
		}
	}
	if es := a.sessions[server]; es != nil && es.h != nil && len(es.waiters) == 0 {
		es.h.CloseAsync()
		es.h = nil
	}
}
