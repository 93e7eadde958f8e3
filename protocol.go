package mcprt

import (
	"context"
	"encoding/json"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/extension"
	"github.com/mcprt/mcprt/messages"
)

// Definition declares a companion's protocol capability: its namespace,
// the request methods answered once, the long-lived stream methods, and
// the server notifications it uses. See docs/protocol-extensions.md.
type Definition = extension.Definition

// Handler receives one notification of a stream or observer: its method
// and its params exactly as they arrived. It runs in order, one
// notification at a time; returning an error or panicking ends only that
// stream (or observer), with reason error. It must not wait for the same
// session's requests (hand such work to a goroutine of your own).
type Handler = actors.Handler

// End says how a stream or observer ended; see messages.EndReason.
type End = messages.End

// RegisterProtocol registers a companion's protocol capability. The
// definition is checked (requests and streams are <namespace>/...,
// notifications notifications/<namespace>/..., MCP's own namespaces are
// reserved) and copied; a namespace has one owner until Dispose (the
// runtime's own events support owns "events"). Registering connects
// nothing.
func (r *Runtime) RegisterProtocol(def Definition) (*Protocol, error) {
	p, err := r.sys.RegisterProtocol(def)
	if err != nil {
		return nil, err
	}
	return &Protocol{p: p, def: p.Definition()}, nil
}

// Protocol is a registered protocol capability.
type Protocol struct {
	p   *actors.Protocol
	def Definition
}

// Namespace is the protocol's namespace.
func (p *Protocol) Namespace() string { return p.def.Namespace }

// Connect opens a protocol session on server through its normal
// configuration and lifecycle: a lazy server connects now, a disabled or
// unknown server is an error, and a recent failed connect is remembered
// (KindServerBackoff). The session is bound to the connection it got;
// when that connection ends, Done is closed and the companion connects
// again explicitly.
func (p *Protocol) Connect(ctx context.Context, server string) (*Session, error) {
	h, err := p.p.Connect(ctx, server, messages.OriginModel)
	if err != nil {
		return nil, err
	}
	return &Session{def: p.def, h: h}, nil
}

// Dispose closes every session of the protocol (cancelling their work,
// never the shared connections) and frees its namespace.
func (p *Protocol) Dispose() { p.p.Dispose() }

// Session is a protocol session on one server, bound to one connection.
// Its methods may be called from any goroutine.
type Session struct {
	def Definition
	h   *actors.Session
}

// Server is the server's configured name.
func (s *Session) Server() string { return s.h.Server() }

// ServerInfo is what the session's connection handshake learned.
func (s *Session) ServerInfo() messages.ServerInfo { return s.h.Info() }

// Done is closed when the connection the session is bound to ends (or the
// session is closed); Why then says why.
func (s *Session) Done() <-chan struct{} { return s.h.Done() }

// Why says why Done is closed ("" while it is not).
func (s *Session) Why() string { return s.h.Why() }

// Close cancels the session's requests, streams and observers; the shared
// connection stays open.
func (s *Session) Close() { s.h.Close() }

// Request sends a declared request and returns its raw result. A JSON-RPC
// error comes back as a *messages.Error of kind KindRPC whose Protocol()
// keeps the server's code, message and data.
func (s *Session) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := s.check(method, s.def.Requests, "request", params); err != nil {
		return nil, err
	}
	r := s.h.Request(ctx, method, params)
	if r.Err != nil {
		return nil, r.Err
	}
	return r.Result, nil
}

// OpenStream starts a declared stream: handler receives the declared
// notifications correlated to it (params._meta's subscription id equal to
// its request id), in order.
func (s *Session) OpenStream(method string, params json.RawMessage, handler Handler) (*Stream, error) {
	if err := s.check(method, s.def.Streams, "stream", params); err != nil {
		return nil, err
	}
	return &Stream{st: s.h.OpenStream(method, params, handler)}, nil
}

// WatchNotifications observes declared notification methods that belong
// to no stream (they still get the runtime's normal handling). Watching
// sends nothing to the server.
func (s *Session) WatchNotifications(methods []string, handler Handler) (*Observer, error) {
	if len(methods) == 0 {
		return nil, messages.Errorf(messages.KindInvalidArgs, s.Server(), "WatchNotifications needs at least one method")
	}
	for _, m := range methods {
		if !extension.Declares(s.def.Notifications, m) {
			return nil, messages.Errorf(messages.KindInvalidArgs, s.Server(), "%q is not a declared notification of protocol %q", m, s.def.Namespace)
		}
	}
	return &Observer{st: s.h.Watch(methods, handler)}, nil
}

func (s *Session) check(method string, declared []string, kind string, params json.RawMessage) error {
	if !extension.Declares(declared, method) {
		return messages.Errorf(messages.KindInvalidArgs, s.Server(), "%q is not a declared %s method of protocol %q", method, kind, s.def.Namespace)
	}
	if err := extension.CheckParams(params); err != nil {
		return messages.Errorf(messages.KindInvalidArgs, s.Server(), "%s params: %v", method, err)
	}
	return nil
}

// Stream is one open stream.
type Stream struct{ st *actors.Stream }

// Sent is closed once the stream's request has been written to the
// connection (not necessarily acknowledged).
func (s *Stream) Sent() <-chan struct{} { return s.st.Sent() }

// Done is closed when the stream has ended.
func (s *Stream) Done() <-chan struct{} { return s.st.Done() }

// Closed waits for the stream to end and says how: cancelled, ended,
// error (with ProtocolError for a JSON-RPC error) or disconnected.
func (s *Stream) Closed() End { return s.st.End() }

// Cancel ends the stream (reason cancelled) and cancels its request the
// transport's way; a stream not yet written sends nothing.
func (s *Stream) Cancel() { s.st.Cancel() }

// Observer is one notification observer.
type Observer struct{ st *actors.Stream }

// Done is closed when the observer has ended.
func (o *Observer) Done() <-chan struct{} { return o.st.Done() }

// Closed waits for the observer to end and says how.
func (o *Observer) Closed() End { return o.st.End() }

// Close ends the observer (reason cancelled).
func (o *Observer) Close() { o.st.Cancel() }
