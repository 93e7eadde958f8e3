package actors

import (
	"encoding/json"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/messages"
)

// The server actor's side of protocol extensions: it binds sessions to a
// connection generation (spawning each session actor as its child), runs
// their pinned requests and streams as ordinary operations with a lease on
// that generation, fans notifications out to observers (each holding a
// lease), and tells every session bound to a generation when it ends.

// bindSession asks a server actor to bind a new protocol session to its
// live connection, connecting first as the lifecycle allows.
type bindSession struct {
	token  messages.Token
	origin messages.Origin
	handle *Session
	reply  func(*messages.Error)
}

// Fail answers the bind with err (the actor crashed while handling it).
func (b *bindSession) Fail(err *messages.Error) { b.reply(err) }

// unbind tells the server actor a session is gone.
type unbind struct{ pid *actor.PID }

// watchCmd registers a notification observer on generation gen.
type watchCmd struct {
	token   messages.Token
	gen     uint64
	methods []string
	pid     *actor.PID // the observer's actor
}

// unwatchCmd removes an observer and returns its lease.
type unwatchCmd struct{ token messages.Token }

// observerFrame is one notification for an observer, its params a copy.
type observerFrame struct {
	method string
	params json.RawMessage
}

// bindingEnded tells a session or observer that its connection has ended.
type bindingEnded struct{ why string }

// observer is a registered notification observer.
type observer struct {
	gen     uint64
	methods map[string]bool
	pid     *actor.PID
}

// extState is the server actor's protocol-extension bookkeeping.
type extState struct {
	sessions  map[*actor.PID]uint64 // session actor -> bound generation
	observers map[messages.Token]*observer
	late      uint64 // stream frames dropped after their stream ended
	unknown   uint64 // responses whose id was never sent, ignored
}

// bind spawns the session actor of m, bound to generation gen (as the
// server actor's child), and answers m.
func (s *serverActor) bind(m *bindSession, gen uint64) {
	if s.ext.sessions == nil {
		s.ext.sessions = map[*actor.PID]uint64{}
	}
	m.handle.gen, m.handle.info = gen, s.info
	pid := s.ctx.Spawn(s.env.props(newSessionActor(s.env, s.me, m.handle, gen), actor.WithSupervisor(&endOnCrash{env: s.env, kind: messages.ActorStream})))
	m.handle.pid = pid
	s.ext.sessions[pid] = gen
	m.reply(nil)
}

// forward hands a session command on, or refuses it.
func (s *serverActor) forward(m *sessionCmd) {
	if _, ok := s.ext.sessions[m.pid]; !ok {
		m.refuse("the protocol session is closed or its connection has ended; connect again")
		return
	}
	s.env.send(m.pid, m)
}

func (s *serverActor) watch(m watchCmd) {
	if s.core.Closed() || !s.core.Bound(m.gen) {
		s.env.send(m.pid, bindingEnded{why: "the connection this protocol session was bound to has ended"})
		return
	}
	if s.ext.observers == nil {
		s.ext.observers = map[messages.Token]*observer{}
	}
	methods := make(map[string]bool, len(m.methods))
	for _, x := range m.methods {
		methods[x] = true
	}
	s.ext.observers[m.token] = &observer{gen: m.gen, methods: methods, pid: m.pid}
	s.exec(s.core.Acquire(s.now(), m.gen))
}

func (s *serverActor) unwatch(token messages.Token) {
	if o := s.ext.observers[token]; o != nil {
		delete(s.ext.observers, token)
		s.exec(s.core.Release(s.now(), o.gen))
	}
}

// observe hands a notification to the observers watching its method on
// its generation, in registration order; it still gets normal handling.
func (s *serverActor) observe(m messages.ConnNotification) {
	for _, t := range s.observerTokens() {
		o := s.ext.observers[t]
		if o.gen == m.Gen && o.methods[m.Method] {
			s.env.send(o.pid, observerFrame{method: m.Method, params: slices.Clone(m.Params)})
		}
	}
}

func (s *serverActor) observerTokens() []messages.Token {
	ts := make([]messages.Token, 0, len(s.ext.observers))
	for t := range s.ext.observers {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// endBindings tells every session and observer of generation gen that its
// connection has ended; observers' leases return. Nothing carries over to
// another connection.
func (s *serverActor) endBindings(gen uint64, why string) {
	for _, t := range s.observerTokens() {
		if o := s.ext.observers[t]; o.gen == gen {
			delete(s.ext.observers, t)
			s.env.send(o.pid, bindingEnded{why: why})
			s.exec(s.core.Release(s.now(), gen))
		}
	}
	var pids []*actor.PID
	for pid, g := range s.ext.sessions {
		if g == gen {
			pids = append(pids, pid)
		}
	}
	slices.SortFunc(pids, func(a, b *actor.PID) int { return compareIDs(a.Id, b.Id) })
	for _, pid := range pids {
		delete(s.ext.sessions, pid)
		s.env.send(pid, bindingEnded{why: why})
	}
}

// checkBindings ends the sessions and observers of every generation that
// is no longer the live connection (closed, lost, replaced, shutting
// down). It runs after every message.
func (s *serverActor) checkBindings() {
	if len(s.ext.sessions) == 0 && len(s.ext.observers) == 0 {
		return
	}
	var gens []uint64
	for _, g := range s.ext.sessions {
		gens = append(gens, g)
	}
	for _, o := range s.ext.observers {
		gens = append(gens, o.gen)
	}
	slices.Sort(gens)
	for _, g := range slices.Compact(gens) {
		if s.core.Closed() || !s.core.Bound(g) {
			s.endBindings(g, s.endedWhy(g))
		}
	}
}

func (s *serverActor) endedWhy(gen uint64) string {
	switch {
	case s.core.Closed():
		return "the runtime is shutting down"
	case s.core.Gen() != gen:
		return "the connection was replaced by a new one"
	}
	if e := s.core.LastError(); e != nil {
		return "the connection ended: " + e.Message
	}
	return "the connection ended"
}

// compareIDs orders actor ids by length, then text, so that "…/10" sorts
// after "…/9".
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
