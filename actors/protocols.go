package actors

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/mcprt/mcprt/extension"
	"github.com/mcprt/mcprt/messages"
)

// protocols is a System's namespace registry: one owner per namespace,
// for host companions (through the root package) and the runtime's own
// (the events companion) alike.
type protocols struct {
	mu    sync.Mutex
	owner map[string]*Protocol
}

// Protocol is a registered protocol capability: the only way to open
// protocol sessions.
type Protocol struct {
	sys *System
	def extension.Definition

	mu       sync.Mutex
	sessions map[*Session]bool
	disposed bool
}

// RegisterProtocol checks and copies def and makes it the owner of its
// namespace. It connects nothing.
func (s *System) RegisterProtocol(def extension.Definition) (*Protocol, error) {
	d, err := extension.Validate(def)
	if err != nil {
		return nil, err
	}
	s.protocols.mu.Lock()
	defer s.protocols.mu.Unlock()
	if s.Closing() {
		return nil, messages.Errorf(messages.KindShutdown, "", "the runtime is shutting down")
	}
	if s.protocols.owner[d.Namespace] != nil {
		return nil, fmt.Errorf("%w: namespace %q is already registered", extension.ErrInvalidDefinition, d.Namespace)
	}
	if s.protocols.owner == nil {
		s.protocols.owner = map[string]*Protocol{}
	}
	p := &Protocol{sys: s, def: d, sessions: map[*Session]bool{}}
	s.protocols.owner[d.Namespace] = p
	return p, nil
}

// Definition is the registered (copied) definition.
func (p *Protocol) Definition() extension.Definition { return p.def }

func (p *Protocol) refusal(server string) *messages.Error {
	return messages.Errorf(messages.KindInvalidArgs, server, "protocol %q was disposed", p.def.Namespace)
}

// Connect binds a session on server (see System.Bind), waiting for it.
func (p *Protocol) Connect(ctx context.Context, server string, origin messages.Origin) (*Session, *messages.Error) {
	if p.isDisposed() {
		return nil, p.refusal(server)
	}
	h, err := p.sys.Bind(ctx, server, origin, p.def.Notifications)
	if err != nil {
		return nil, err
	}
	return p.adopt(h)
}

// ConnectAsync binds a session without waiting: reply runs once, from
// whichever goroutine or actor finished the bind. Actors use it.
func (p *Protocol) ConnectAsync(server string, origin messages.Origin, reply func(*Session, *messages.Error)) {
	if p.isDisposed() {
		reply(nil, p.refusal(server))
		return
	}
	h := newSessionHandle(p.sys, server, p.def.Notifications)
	var once sync.Once
	p.sys.Post(server, &bindSession{token: p.sys.NewToken(), origin: origin, handle: h, reply: func(err *messages.Error) {
		once.Do(func() {
			if err != nil {
				reply(nil, err)
				return
			}
			reply(p.adopt(h))
		})
	}})
}

func (p *Protocol) isDisposed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.disposed
}

// adopt records a bound session, or closes it when the protocol was
// disposed meanwhile.
func (p *Protocol) adopt(h *Session) (*Session, *messages.Error) {
	p.mu.Lock()
	if p.disposed {
		p.mu.Unlock()
		h.Close()
		return nil, p.refusal(h.server)
	}
	h.proto.Store(p)
	select {
	case <-h.done: // it ended already: nothing to close later
	default:
		p.sessions[h] = true
	}
	p.mu.Unlock()
	return h, nil
}

func (p *Protocol) forget(h *Session) {
	p.mu.Lock()
	delete(p.sessions, h)
	p.mu.Unlock()
}

// Dispose closes every session of the protocol (never the shared
// connections) and frees its namespace.
func (p *Protocol) Dispose() {
	p.mu.Lock()
	if p.disposed {
		p.mu.Unlock()
		return
	}
	p.disposed = true
	var open []*Session
	for h := range p.sessions {
		open = append(open, h)
	}
	// Never in map order: the closes are posts, whose order reaches the
	// simulator's trace. Session actors' ids follow their spawn order.
	slices.SortFunc(open, func(a, b *Session) int { return compareIDs(a.pid.Id, b.pid.Id) })
	p.sessions = nil
	p.mu.Unlock()
	for _, h := range open {
		h.Close()
	}
	r := &p.sys.protocols
	r.mu.Lock()
	if r.owner[p.def.Namespace] == p {
		delete(r.owner, p.def.Namespace)
	}
	r.mu.Unlock()
}
