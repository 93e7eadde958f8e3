package remote

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// The member's side of the protocol-extension API (ops_protocol.go runs
// the operations). What belongs to whom:
//
//   - A namespace is registered with the runtime once (the runtime allows
//     one owner per namespace) and shared by the sessions that registered
//     it with the same definition; a session registering it with another
//     definition is refused, and so is one registering a namespace the
//     member's own host or the runtime ("events") owns. The runtime's
//     registration is disposed with its last session.
//   - Everything else is the session's own: its protocol sessions (each
//     bound to one connection of a server, as the runtime's are), their
//     streams and observers, and its outbox. No session can name another
//     session's protocol sessions or streams: they are looked up among its
//     own, by the ids it chose.
//   - The session's end (detach, crash, silence, its process's death, the
//     member's Close) closes its protocol sessions (their streams and
//     observers are cancelled on the server) and drops its shares.
//
// The state is held under memberProtos' lock, not in the session actor's
// fields: the operations run on pool goroutines (Connect and Request
// wait), and the runtime's handlers and the watchers call in from their
// own goroutines. The session actor's end (the rules' Ended effect) ends
// it, and a session's state is made only while the router knows the
// session live, under the same lock, so none outlives its session.
//
// What the protocol sessions report by themselves (a stream's
// notifications, its request written, its end; a protocol session's end)
// goes down as protoEventMsg through the session's outbox: one writer at
// a time on a pool goroutine, in the order it was put there, so a
// stream's notifications arrive in order and before its end.

// receiverName is the name of a session process's receiver (attach.go):
// where a member sends what is not a reply.
const receiverName = "mcprt-session"

// maxOutbox bounds the events waiting to be written to one session; a
// stream whose notification finds it full ends with an error (its
// handler failed: the session is not keeping up), never the others.
const maxOutbox = 4096

// memberProtos is a member's protocol-extension state.
type memberProtos struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	shared   map[string]*sharedProto   // by namespace
	sessions map[string]*sessionProtos // by session actor id
}

// sharedProto is a namespace registered with the runtime for sessions.
type sharedProto struct {
	p      *mcprt.Protocol
	def    mcprt.Definition
	owners map[string]bool // session actor ids

	relayMu sync.Mutex // serialises registering on peers (protocol_peer.go)
	// relays are the namespace's registrations through this member's
	// sessions on other members, by that session; guarded by relayMu.
	relays map[*Session]*Protocol
	gone   bool // disposed; guarded by relayMu
}

// sessionProtos is one session's protocol-extension state.
type sessionProtos struct {
	sid    string
	member bool          // another member's session: nothing is relayed for it
	quit   chan struct{} // closed when the session ends
	out    outbox
	ended  bool                   // guarded by memberProtos.mu
	ns     map[string]bool        // guarded by memberProtos.mu: namespaces registered
	conns  map[uint64]*memberConn // guarded by memberProtos.mu: by the session's id (nil: connecting)
	strs   map[uint64]protoStream // guarded by memberProtos.mu: streams and observers by id (nil: opening)
	// early are the protocol sessions and streams the session closed or
	// cancelled while they were still connecting or opening (its cancel
	// may run first: operations run on pool goroutines); guarded by
	// memberProtos.mu.
	early map[uint64]bool
}

// memberConn is one protocol session of a session's.
type memberConn struct {
	ns string
	c  protoConn
}

// protoConn is a protocol session on the runtime (localConn) or relayed
// through a session on the member running its server (protocol_peer.go).
type protoConn interface {
	ServerInfo() messages.ServerInfo
	Done() <-chan struct{}
	Why() string
	Close()
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	openStream(method string, params json.RawMessage, h mcprt.Handler) (protoStream, error)
	watch(methods []string, h mcprt.Handler) (protoStream, error)
}

// protoStream is a stream or an observer.
type protoStream interface {
	Done() <-chan struct{}
	Closed() mcprt.End
	Cancel()
	sentCh() <-chan struct{} // nil for an observer
}

type localConn struct{ *mcprt.Session }

func (c localConn) openStream(method string, params json.RawMessage, h mcprt.Handler) (protoStream, error) {
	st, err := c.OpenStream(method, params, h)
	if err != nil {
		return nil, err
	}
	return localStream{st}, nil
}

func (c localConn) watch(methods []string, h mcprt.Handler) (protoStream, error) {
	o, err := c.WatchNotifications(methods, h)
	if err != nil {
		return nil, err
	}
	return localObserver{o}, nil
}

type localStream struct{ *mcprt.Stream }

func (s localStream) sentCh() <-chan struct{} { return s.Sent() }

type localObserver struct{ *mcprt.Observer }

func (o localObserver) Cancel()                 { o.Close() }
func (o localObserver) sentCh() <-chan struct{} { return nil }

// protoSession returns the state of the session whose call ctx is, making it
// on its first use; an error once the session has ended.
func (s *Server) protoSession(ctx context.Context, fromMember bool) (*sessionProtos, error) {
	sc, ok := mcprt.CallerOf(ctx).(sessionCall)
	if !ok {
		return nil, messages.Errorf(messages.KindInternal, "", "a protocol operation outside a session's call")
	}
	mp := &s.protos
	mp.mu.Lock()
	defer mp.mu.Unlock()
	if sp := mp.sessions[sc.pid.Id]; sp != nil {
		return sp, nil
	}
	// The router forgets a session when it ends, before endProtocols runs
	// (which takes mp.mu): a session found here is ended by it later.
	client, ok := s.router.clientOf(sc.pid.Id)
	if !ok {
		return nil, messages.Errorf(messages.KindDisconnected, "", "the session has ended")
	}
	if mp.sessions == nil {
		mp.sessions, mp.shared = map[string]*sessionProtos{}, map[string]*sharedProto{}
	}
	sp := &sessionProtos{sid: sc.pid.Id, member: fromMember, quit: make(chan struct{}), ns: map[string]bool{}, conns: map[uint64]*memberConn{},
		strs: map[uint64]protoStream{}, early: map[uint64]bool{}}
	sp.out = outbox{srv: s, to: client}
	mp.sessions[sp.sid] = sp
	return sp, nil
}

// clientOf is the receiver of live session id.
func (r *router) clientOf(id string) (*actor.PID, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.pids[id]
	if !ok {
		return nil, false
	}
	return actor.NewPID(e.client, receiverName), true
}

// endProtocols ends session sid's protocol sessions and shares: its
// session has ended (why).
func (s *Server) endProtocols(sid string) {
	mp := &s.protos
	mp.mu.Lock()
	sp := mp.sessions[sid]
	if sp == nil {
		mp.mu.Unlock()
		return
	}
	delete(mp.sessions, sid)
	sp.ended = true
	close(sp.quit)
	sp.out.close()
	var conns []protoConn
	for _, c := range sp.conns {
		if c != nil {
			conns = append(conns, c.c)
		}
	}
	var strs []protoStream
	for _, st := range sp.strs {
		if st != nil {
			strs = append(strs, st)
		}
	}
	var disposed []*sharedProto
	for ns := range sp.ns {
		if sh := mp.dropLocked(ns, sid); sh != nil {
			disposed = append(disposed, sh)
		}
	}
	mp.mu.Unlock()
	s.closeAll(conns, strs, disposed)
}

// dropLocked ends sid's share of namespace ns; the registration when it
// was the last one's (to dispose). mp.mu is held.
func (mp *memberProtos) dropLocked(ns, sid string) *sharedProto {
	sh := mp.shared[ns]
	if sh == nil {
		return nil
	}
	delete(sh.owners, sid)
	if len(sh.owners) > 0 {
		return nil
	}
	delete(mp.shared, ns)
	return sh
}

// closeAll closes protocol sessions, cancels streams and disposes
// registrations, off the caller's turn (a protocol session's Close waits
// for the runtime's actors): on a pool goroutine, or here once the pool
// is closed.
func (s *Server) closeAll(conns []protoConn, strs []protoStream, disposed []*sharedProto) {
	if len(conns)+len(strs)+len(disposed) == 0 {
		return
	}
	f := func() { s.closeNow(conns, strs, disposed) }
	if !s.pool.run(f) {
		f()
	}
}

// closeNow is closeAll on the caller's goroutine.
func (s *Server) closeNow(conns []protoConn, strs []protoStream, disposed []*sharedProto) {
	for _, st := range strs {
		st.Cancel()
	}
	for _, c := range conns {
		c.Close()
	}
	for _, sh := range disposed {
		sh.dispose()
	}
}

// dispose ends the runtime's registration and the relays'.
func (sh *sharedProto) dispose() {
	sh.p.Dispose()
	sh.relayMu.Lock()
	relays := sh.relays
	sh.relays, sh.gone = nil, true
	sh.relayMu.Unlock()
	for _, p := range relays {
		p.Dispose()
	}
}

// outbox writes a session's protocol events in order, one writer at a
// time (a pool goroutine), so a session slow to read holds up only its
// own events.
type outbox struct {
	srv *Server
	to  *actor.PID

	mu sync.Mutex
	// The fields below are guarded by mu.
	queue   []*protoEventMsg
	running bool
	closed  bool
}

// push queues ev; false when the outbox is full (unless must: an end is
// always queued, so a stream's end is never lost).
func (o *outbox) push(ev *protoEventMsg, must bool) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return true // the session has ended: nobody to tell
	}
	if !must && len(o.queue) >= maxOutbox {
		o.mu.Unlock()
		return false
	}
	o.queue = append(o.queue, ev)
	if o.running {
		o.mu.Unlock()
		return true
	}
	o.running = true
	o.mu.Unlock()
	if !o.srv.pool.run(o.drain) {
		o.close()
	}
	return true
}

func (o *outbox) drain() {
	for {
		o.mu.Lock()
		q := o.queue
		o.queue = nil
		if len(q) == 0 || o.closed {
			o.running = false
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
		for _, ev := range q {
			if err := o.srv.sendTo(o.to, ev); err != nil {
				o.srv.logger.Warn("remote: a protocol event for a session", "err", err)
			}
		}
	}
}

func (o *outbox) close() {
	o.mu.Lock()
	o.closed, o.queue = true, nil
	o.mu.Unlock()
}

// errSlow is a stream handler's error when its session's outbox is full.
var errSlow = messages.Errorf(messages.KindInternal, "", "the attached session is not keeping up (%d protocol events waiting)", maxOutbox)
