package remote

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/extension"
	"github.com/mcprt/mcprt/messages"
)

// The protocol-extension API through an attached session: the same
// contracts as mcprt.Runtime.RegisterProtocol's (docs/protocol-extensions.md,
// "Through an attached session"), answered by the member's runtime. The
// namespace is registered for this session: another session may register
// the same namespace with the same definition (the member shares the
// runtime's registration between them) and each session's protocol
// sessions, streams and observers are its own.

// RegisterProtocol registers a companion's protocol capability on the
// shared runtime for this session. The definition is checked by the
// member's runtime (errors wrap extension.ErrInvalidDefinition); a
// namespace the member's host or the runtime owns ("events"), or that
// another session registered with a different definition, is refused.
// Registering connects nothing.
func (s *Session) RegisterProtocol(def mcprt.Definition) (*Protocol, error) {
	def = mcprt.Definition{Namespace: def.Namespace, Requests: slices.Clone(def.Requests),
		Streams: slices.Clone(def.Streams), Notifications: slices.Clone(def.Notifications)}
	args, err := json.Marshal(def)
	if err != nil {
		return nil, messages.Errorf(messages.KindInvalidArgs, "", "protocol definition: %s", err)
	}
	if _, err := s.request(context.Background(), opProtoRegister, "", args); err != nil {
		if messages.KindOf(err) == messages.KindInvalidArgs {
			return nil, defError{messages.AsError(err, messages.KindInvalidArgs, "")}
		}
		return nil, err
	}
	return &Protocol{s: s, def: def, conns: map[*ProtocolSession]bool{}}, nil
}

// defError is a refused definition: a *messages.Error that is also
// extension.ErrInvalidDefinition.
type defError struct{ e *messages.Error }

func (d defError) Error() string   { return d.e.Error() }
func (d defError) Unwrap() []error { return []error{extension.ErrInvalidDefinition, d.e} }

// Protocol is a protocol capability registered through a session.
type Protocol struct {
	s   *Session
	def mcprt.Definition

	mu sync.Mutex
	// The fields below are guarded by mu.
	conns    map[*ProtocolSession]bool
	disposed bool
}

// Namespace is the protocol's namespace.
func (p *Protocol) Namespace() string { return p.def.Namespace }

// Connect opens a protocol session on server, a server the shared
// runtime's configuration names (through its normal lifecycle: a lazy
// server connects now, an unknown or disabled one is an error), or one
// another member of its cluster runs. The session is bound to the
// connection it got; when that connection ends, or this session ends,
// Done is closed.
func (p *Protocol) Connect(ctx context.Context, server string) (*ProtocolSession, error) {
	p.mu.Lock()
	disposed := p.disposed
	p.mu.Unlock()
	if disposed {
		return nil, messages.Errorf(messages.KindInvalidArgs, server, "protocol %q was disposed", p.def.Namespace)
	}
	t := &p.s.protos
	id := t.newID()
	ps := &ProtocolSession{p: p, id: id, server: server, done: make(chan struct{}), streams: map[uint64]*streamCore{}}
	if !t.addConn(ps) {
		return nil, t.goneErr()
	}
	args, _ := json.Marshal(protoConnectArgs{Namespace: p.def.Namespace, Server: server, Conn: id})
	b, err := p.s.request(ctx, opProtoConnect, "", args)
	if err == nil {
		err = json.Unmarshal(b, &ps.info)
	}
	if err != nil {
		t.dropConn(id)
		if messages.KindOf(err) == messages.KindAborted {
			p.s.fire(opProtoClose, protoOpenArgs{Conn: id}) // in case it connected meanwhile
		}
		return nil, err
	}
	p.mu.Lock()
	if p.disposed {
		p.mu.Unlock()
		ps.Close()
		return nil, messages.Errorf(messages.KindInvalidArgs, server, "protocol %q was disposed", p.def.Namespace)
	}
	p.conns[ps] = true
	p.mu.Unlock()
	return ps, nil
}

// Dispose closes every protocol session of the protocol opened through
// this session (cancelling their work, never the shared connections) and
// ends this session's registration of the namespace: once it returns,
// the namespace is free on the member unless another session shares it.
func (p *Protocol) Dispose() {
	p.mu.Lock()
	if p.disposed {
		p.mu.Unlock()
		return
	}
	p.disposed = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for ps := range conns {
		ps.end("protocol "+p.def.Namespace+" was disposed", &messages.End{Reason: messages.EndCancelled, Error: "the protocol was disposed"})
	}
	_, _ = p.s.request(context.Background(), opProtoDispose, p.def.Namespace, nil)
}

// ProtocolSession is a protocol session on one server, bound to one
// connection, held by the member for this session. Its methods may be
// called from any goroutine.
type ProtocolSession struct {
	p      *Protocol
	id     uint64
	server string
	info   messages.ServerInfo
	done   chan struct{}

	mu sync.Mutex
	// The fields below are guarded by mu.
	why     string
	ended   bool
	streams map[uint64]*streamCore
}

// Server is the server's configured name.
func (ps *ProtocolSession) Server() string { return ps.server }

// ServerInfo is what the session's connection handshake learned.
func (ps *ProtocolSession) ServerInfo() messages.ServerInfo { return ps.info }

// Done is closed when the connection the session is bound to ends, the
// session is closed, or the attached session ends; Why then says why.
func (ps *ProtocolSession) Done() <-chan struct{} { return ps.done }

// Why says why Done is closed ("" while it is not).
func (ps *ProtocolSession) Why() string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.why
}

// Close cancels the session's requests, streams and observers on the
// member; the shared connection stays open.
func (ps *ProtocolSession) Close() {
	if ps.end("the protocol session was closed", &messages.End{Reason: messages.EndCancelled, Error: "the protocol session was closed"}) {
		ps.p.s.fire(opProtoClose, protoOpenArgs{Conn: ps.id})
	}
}

// end closes Done with why and, unless e is nil, ends the streams with e
// now; false when it had ended already.
func (ps *ProtocolSession) end(why string, e *messages.End) bool {
	ps.mu.Lock()
	if ps.ended {
		ps.mu.Unlock()
		return false
	}
	ps.ended, ps.why = true, why
	streams := ps.streams
	ps.streams = nil
	ps.mu.Unlock()
	close(ps.done)
	ps.p.s.protos.dropConn(ps.id)
	ps.p.mu.Lock()
	delete(ps.p.conns, ps)
	ps.p.mu.Unlock()
	if e != nil {
		for _, c := range streams {
			c.finish(*e)
		}
	}
	return true
}

// Request sends a declared request and returns its raw result. A JSON-RPC
// error comes back as a *messages.Error of kind KindRPC whose Protocol()
// keeps the server's code, message and data.
func (ps *ProtocolSession) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	ps.mu.Lock()
	ended, why := ps.ended, ps.why
	ps.mu.Unlock()
	if ended {
		return nil, messages.Errorf(messages.KindDisconnected, ps.server, "%s", why)
	}
	args, err := json.Marshal(protoRequestArgs{Conn: ps.id, Method: method, Params: params})
	if err != nil {
		return nil, messages.Errorf(messages.KindInvalidArgs, ps.server, "%s params: %s", method, err)
	}
	b, err := ps.p.s.request(ctx, opProtoRequest, "", args)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// OpenStream starts a declared stream on the member: handler receives
// the declared notifications correlated to it, in order, on a goroutine
// of the stream's own (returning an error or panicking ends only this
// stream, as error, and cancels it on the server). A refused method or
// params is an error; a stream the member could not send any more (the
// protocol session ended) is returned ended, NotSent.
func (ps *ProtocolSession) OpenStream(method string, params json.RawMessage, handler mcprt.Handler) (*Stream, error) {
	c, err := ps.open(opProtoOpen, protoOpenArgs{Method: method, Params: params}, handler)
	if err != nil {
		return nil, err
	}
	return &Stream{c: c}, nil
}

// WatchNotifications observes declared notification methods that belong
// to no stream, as mcprt.Session.WatchNotifications does, on the member.
func (ps *ProtocolSession) WatchNotifications(methods []string, handler mcprt.Handler) (*Observer, error) {
	if len(methods) == 0 {
		return nil, messages.Errorf(messages.KindInvalidArgs, ps.server, "WatchNotifications needs at least one method")
	}
	c, err := ps.open(opProtoWatch, protoOpenArgs{Methods: methods}, handler)
	if err != nil {
		return nil, err
	}
	return &Observer{c: c}, nil
}

// open starts a stream or observer: it is routed to before the member
// opens it, so its first notification cannot come before it.
func (ps *ProtocolSession) open(op string, a protoOpenArgs, handler mcprt.Handler) (*streamCore, error) {
	s := ps.p.s
	a.Conn, a.Stream = ps.id, s.protos.newID()
	c := newStreamCore(s, ps, a.Stream, handler, op == opProtoWatch)
	ps.mu.Lock()
	ended, why := ps.ended, ps.why
	if !ended {
		ps.streams[c.id] = c
	}
	ps.mu.Unlock()
	if ended {
		c.finish(messages.End{Reason: messages.EndDisconnected, Error: why, NotSent: true})
		return c, nil
	}
	if !s.protos.addStream(c) {
		c.finish(messages.End{Reason: messages.EndDisconnected, Error: s.protos.goneErr().Error(), NotSent: true})
		return c, nil
	}
	args, err := json.Marshal(a)
	if err == nil {
		_, err = s.request(context.Background(), op, "", args)
	}
	if err != nil {
		c.forget()
		if k := messages.KindOf(err); k == messages.KindDisconnected || k == messages.KindShutdown {
			c.finish(messages.End{Reason: messages.EndDisconnected, Error: err.Error(), NotSent: true})
			return c, nil
		}
		c.finish(messages.End{Reason: messages.EndError, Error: err.Error(), NotSent: true})
		return nil, err
	}
	return c, nil
}

// Stream is one open stream.
type Stream struct{ c *streamCore }

// Sent is closed once the stream's request has been written to the
// server's connection (not necessarily acknowledged).
func (s *Stream) Sent() <-chan struct{} { return s.c.sent }

// Done is closed when the stream has ended and its handler has returned
// for the last time.
func (s *Stream) Done() <-chan struct{} { return s.c.done }

// Closed waits for the stream to end and says how: cancelled, ended,
// error (with ProtocolError for a JSON-RPC error) or disconnected.
func (s *Stream) Closed() mcprt.End { return s.c.closed() }

// Cancel ends the stream (reason cancelled) and cancels its request on
// the server; its handler is not called again.
func (s *Stream) Cancel() { s.c.cancel() }

// Observer is one notification observer.
type Observer struct{ c *streamCore }

// Done is closed when the observer has ended.
func (o *Observer) Done() <-chan struct{} { return o.c.done }

// Closed waits for the observer to end and says how.
func (o *Observer) Closed() mcprt.End { return o.c.closed() }

// Close ends the observer (reason cancelled).
func (o *Observer) Close() { o.c.cancel() }

// fire sends one protocol operation whose answer nobody waits for (it is
// dropped when it comes).
func (s *Session) fire(op string, a protoOpenArgs) {
	args, _ := json.Marshal(a)
	s.send(&requestMsg{Op: op, Args: args})
}

func (s *Session) send(m *requestMsg) {
	s.mu.Lock()
	if s.gone != nil {
		s.mu.Unlock()
		return
	}
	s.next++
	m.ID = s.next
	s.mu.Unlock()
	if err := s.link.send(s.session, m); err != nil && !errors.Is(err, errLinksClosed) {
		s.logger.Warn("remote: a protocol operation", "op", m.Op, "err", err)
	}
}
