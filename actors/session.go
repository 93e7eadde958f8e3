package actors

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/messages"
)

// Handler receives one notification of a stream or observer: its method
// and its params exactly as they arrived. It runs in the stream's actor
// turn, in order; returning an error (or panicking) ends that stream only.
// It must not wait for the same session's requests (on stdio and sockets
// it runs on the connection's reader, which would then wait for itself).
type Handler func(method string, params json.RawMessage) error

// Session is a protocol session bound to one connection generation of one
// server. Its methods may be called from any goroutine.
type Session struct {
	sys           *System
	server        string
	notifications []string // the declared notifications: what streams route

	// Set by the server actor before Bind returns.
	gen  uint64
	info messages.ServerInfo
	pid  *actor.PID

	done     chan struct{}
	doneOnce sync.Once
	why      atomic.Pointer[string]

	// Commands posted and not yet taken by the session's actor, with their
	// refusals: when that actor stops they are refused (abandon), since an
	// actor that stops (shutdown) drops what is still in its mailbox, and a
	// stream or request must always end.
	mu       sync.Mutex
	inflight map[uint64]func(why string) // guarded by mu
	nextCmd  uint64                      // guarded by mu
	ended    bool                        // guarded by mu: the session's actor has stopped

	proto atomic.Pointer[Protocol] // the registration that opened it, if any
}

// Bind binds a new protocol session to server's live connection,
// connecting first as the server's lifecycle allows (lazy connect, failure
// memory for OriginModel, disabled and unknown servers refused).
// notifications are the methods its streams may receive.
func (s *System) Bind(ctx context.Context, server string, origin messages.Origin, notifications []string) (*Session, *messages.Error) {
	h := newSessionHandle(s, server, notifications)
	ch := make(chan *messages.Error, 1)
	token := s.NewToken()
	s.Post(server, &bindSession{token: token, origin: origin, handle: h, reply: once(ch)})
	if err := await(ctx, s, server, token, ch, func(e *messages.Error) *messages.Error { return e }); err != nil {
		return nil, err
	}
	return h, nil
}

func newSessionHandle(s *System, server string, notifications []string) *Session {
	return &Session{sys: s, server: server, notifications: append([]string(nil), notifications...), done: make(chan struct{})}
}

// Server is the configured server's name.
func (h *Session) Server() string { return h.server }

// Gen is the connection generation the session is bound to.
func (h *Session) Gen() uint64 { return h.gen }

// Info is what that connection's handshake learned.
func (h *Session) Info() messages.ServerInfo { return h.info }

// Done is closed when the session's connection ends or the session is
// closed.
func (h *Session) Done() <-chan struct{} { return h.done }

// Why says why Done is closed ("" while it is not).
func (h *Session) Why() string {
	if p := h.why.Load(); p != nil {
		return *p
	}
	return ""
}

func (h *Session) signalDone(why string) {
	h.doneOnce.Do(func() {
		h.why.Store(&why)
		close(h.done)
		if p := h.proto.Load(); p != nil {
			p.forget(h)
		}
	})
}

// abandon is the session's actor stopping: Done closes, the commands
// still on the way to it (its mailbox is dropped) are refused in the
// order they were posted, and any posted later is refused at once.
func (h *Session) abandon(why string) {
	h.signalDone(why)
	h.mu.Lock()
	h.ended = true
	left := h.inflight
	h.inflight = nil
	h.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(left)) {
		left[id](h.Why())
	}
}

// post hands a command to the session's actor through its server actor,
// which refuses it (refuse runs) when the session is no longer bound. A
// refusal also closes Done: the session is gone, even when the server
// actor learnt it (the connection ended) before the session's actor did,
// and a caller that keeps the handle must see that before it tries again.
// Each command is either taken by the session's actor (take) or refused,
// exactly once; those still on the way when the actor stops are refused
// then (abandon).
func (h *Session) post(cmd any, refuse func(why string)) {
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		refuse(h.Why())
		return
	}
	h.nextCmd++
	id := h.nextCmd
	if h.inflight == nil {
		h.inflight = map[uint64]func(string){}
	}
	h.inflight[id] = refuse
	h.mu.Unlock()
	h.sys.Post(h.server, &sessionCmd{id: id, pid: h.pid, cmd: cmd, refuse: func(why string) {
		taken := h.take(id)
		h.signalDone(why)
		if taken {
			refuse(why)
		}
	}})
}

// take reports whether command id was still on the way (and now is not):
// the caller may run or refuse it. False means it was refused already.
func (h *Session) take(id uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.inflight[id]; !ok {
		return false
	}
	delete(h.inflight, id)
	return true
}

// notSent is the reply to a request its session refused.
func (h *Session) notSent(why string) messages.Reply {
	return messages.Reply{Err: messages.Errorf(messages.KindDisconnected, h.server, "%s", why), NotSent: true}
}

// Request sends one request on the session's connection and waits for its
// result, a JSON-RPC error (KindRPC, with code and data), or a failure.
// It is bounded by the server's call deadline and by ctx.
func (h *Session) Request(ctx context.Context, method string, params json.RawMessage) messages.Reply {
	ch := make(chan messages.Reply, 1)
	reply := once(ch)
	token := h.sys.NewToken()
	h.post(sessRequest{token: token, method: method, params: params, reply: reply}, func(why string) { reply(h.notSent(why)) })
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
	case <-h.sys.done:
	}
	if r, ok := ready(ch); ok {
		return r // it arrived with ctx's end (see ready)
	}
	h.post(sessAbort{token: token}, func(why string) {
		reply(messages.Reply{Err: messages.Errorf(messages.KindAborted, h.server, "cancelled by the caller")})
	})
	select {
	case r := <-ch:
		return r
	case <-h.sys.done:
		if r, ok := ready(ch); ok {
			return r
		}
		return messages.Reply{Err: messages.Errorf(messages.KindShutdown, h.server, "the runtime is shutting down")}
	}
}

// OpenStream starts a stream request; handler receives its correlated
// notifications. The stream is returned at once; Sent and Done tell the
// rest.
func (h *Session) OpenStream(method string, params json.RawMessage, handler Handler) *Stream {
	return h.OpenStreamWith(method, params, handler, nil)
}

// OpenStreamWith is OpenStream with onEnd, which runs once when the
// stream ends (before Done closes), from the stream's actor: actors use
// it to hear of the end as a message.
func (h *Session) OpenStreamWith(method string, params json.RawMessage, handler Handler, onEnd func(messages.End)) *Stream {
	st := newStream(h.sys, h.server)
	st.onEnd = onEnd
	h.post(sessOpen{stream: st, method: method, params: params, handler: handler, methods: h.notifications}, st.refused)
	return st
}

// StreamWindow is how many notifications of one stream may be in flight
// between the connection and the consumer: beyond it the connection's
// reader waits (backpressure), so a burst never grows a queue.
const StreamWindow = 256

// OpenStreamDeferred is OpenStreamWith for a consumer that finishes a
// frame later, in another actor: handler calls done when the frame is
// fully handled, and until then the frame counts against StreamWindow.
func (h *Session) OpenStreamDeferred(method string, params json.RawMessage, handler func(method string, params json.RawMessage, done func()) error, onEnd func(messages.End)) *Stream {
	st := newStream(h.sys, h.server)
	st.onEnd = onEnd
	h.post(sessOpen{stream: st, method: method, params: params, deferred: handler, methods: h.notifications}, st.refused)
	return st
}

// RequestAsync sends one request without waiting: reply runs once with
// the outcome. Actors use it.
func (h *Session) RequestAsync(method string, params json.RawMessage, reply func(messages.Reply)) {
	var o sync.Once
	r := func(x messages.Reply) { o.Do(func() { reply(x) }) }
	h.post(sessRequest{token: h.sys.NewToken(), method: method, params: params, reply: r}, func(why string) { r(h.notSent(why)) })
}

// Watch starts a notification observer for methods on the session's
// connection (notifications that belong to no stream).
func (h *Session) Watch(methods []string, handler Handler) *Stream {
	st := newStream(h.sys, h.server)
	st.observer = true
	h.post(sessOpen{stream: st, handler: handler, methods: append([]string(nil), methods...)}, st.refused)
	return st
}

// Close ends the session: its requests are aborted, its streams and
// observers cancelled; the shared connection stays open. It returns once
// Done is closed (or the runtime has shut down).
func (h *Session) Close() {
	h.CloseAsync()
	select {
	case <-h.done:
	case <-h.sys.done:
	}
}

// CloseAsync is Close without waiting for Done. Actors use it: an actor's
// turn must not wait for the session's actor, which may be running
// further up the same goroutine (the inline dispatcher).
func (h *Session) CloseAsync() { h.post(sessClose{}, h.signalDone) }

// Stream is one stream or notification observer.
type Stream struct {
	sys      *System
	server   string
	token    messages.Token
	observer bool

	pid       atomic.Pointer[actor.PID] // set by its actor when it starts
	cancelled atomic.Bool
	// lost is set when its session's actor crashed: the stream ends with
	// this reason when it stops.
	lost atomic.Pointer[string]

	sent     chan struct{}
	sentOnce sync.Once
	done     chan struct{}
	doneOnce sync.Once
	end      messages.End
	onEnd    func(messages.End)
}

func newStream(sys *System, server string) *Stream {
	return &Stream{sys: sys, server: server, token: sys.NewToken(), sent: make(chan struct{}), done: make(chan struct{})}
}

// Sent is closed once the stream's request has been written (never for an
// observer, or a stream that ended before it was written).
func (st *Stream) Sent() <-chan struct{} { return st.sent }

// Done is closed when the stream has ended.
func (st *Stream) Done() <-chan struct{} { return st.done }

// End says how the stream ended; it is valid once Done is closed.
func (st *Stream) End() messages.End {
	<-st.done
	return st.end
}

// Cancel ends the stream as cancelled (if it has not ended), cancelling
// its request the transport's way; a stream not yet written sends nothing.
func (st *Stream) Cancel() {
	st.cancelled.Store(true)
	if p := st.pid.Load(); p != nil {
		st.sys.env.send(p, cancelStream{})
	}
}

func (st *Stream) markSent() { st.sentOnce.Do(func() { close(st.sent) }) }

func (st *Stream) finish(end messages.End) {
	st.doneOnce.Do(func() {
		st.end = end
		if st.onEnd != nil {
			st.onEnd(end)
		}
		close(st.done)
	})
}

func (st *Stream) refused(why string) {
	st.finish(messages.End{Reason: messages.EndDisconnected, Error: why, NotSent: true})
}
