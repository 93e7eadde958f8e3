package supervisor

import (
	"time"

	"github.com/mcprt/mcprt/messages"
)

// waitKind says what a command waiting for a connection does once the
// connection is up.
type waitKind int

const (
	waitRequest waitKind = iota // start its request
	waitList                    // start its listing
	waitConnect                 // answer the connect
	waitRefresh                 // join the catalog refresh
	waitFresh                   // join a forced refresh (after a fresh connect)
	waitBind                    // bind its protocol session
	waitResend                  // send its operation again
	waitRelist                  // list again for a refresh that moved
)

// waiter is a command waiting for a connection.
type waiter struct {
	kind  waitKind
	token messages.Token
	// cmd is answered when the connection does not come (nil: nobody
	// waits but the runtime).
	cmd messages.Failable
	// match is the command whose handling a crash interrupts; the root
	// supervisor answers that one (see Crash).
	match messages.Failable
	force bool            // waitRefresh: list even if the catalog is current
	op    *op             // waitResend
	ws    []refreshWaiter // waitRelist: the refresh's callers
	moves int             // waitRelist: how often that refresh moved
}

// withConnection runs w on a live connection, connecting first (or
// queueing it behind a dial in progress) as the lifecycle decides.
func (s *Server) withConnection(w waiter, origin messages.Origin) {
	if s.closed {
		s.fail(&w, s.shutdownErr())
		return
	}
	d, effects := s.life.Use(s.now, origin)
	switch {
	case d.Err != nil:
		s.fail(&w, d.Err)
	case d.Ready:
		s.ready(&w, d.Gen)
	default:
		s.waiters = append(s.waiters, w)
	}
	s.run(effects)
}

// connect is an explicit connect (fresh: replacing a live connection) on
// behalf of w.
func (s *Server) connect(w waiter, fresh bool) {
	if s.closed {
		s.fail(&w, s.shutdownErr())
		return
	}
	s.emit(Revive{})
	d, effects := s.life.Connect(s.now, fresh)
	switch {
	case d.Err != nil:
		s.fail(&w, d.Err)
	case d.Ready:
		s.ready(&w, d.Gen)
	default:
		s.waiters = append(s.waiters, w)
	}
	s.run(effects)
}

// ready runs w on live connection gen.
func (s *Server) ready(w *waiter, gen uint64) {
	switch w.kind {
	case waitRequest:
		m := w.cmd.(*messages.Request)
		s.begin(&op{req: m, gen: gen, token: m.Token, kind: opRequest, method: m.Method, params: m.Params, origin: m.Origin}, s.deadline(m.Deadline))
	case waitList:
		m := w.cmd.(*messages.ListAll)
		s.begin(&op{list: m, gen: gen, token: m.Token, kind: opList, method: m.Method, field: m.Field, cursors: map[string]bool{}, origin: m.Origin}, s.cfg.CatalogTimeout)
	case waitConnect:
		s.emit(ConnectReply{To: w.cmd.(*messages.Connect), Gen: gen})
	case waitRefresh:
		s.join(gen, w.force, w.token, w.cmd)
	case waitFresh:
		s.join(gen, true, w.token, w.cmd)
	case waitBind:
		s.emit(Bind{To: w.cmd, Gen: gen})
	case waitResend:
		o := w.op
		o.gen = gen
		s.run(s.life.Acquire(gen))
		if o.token != 0 {
			s.byToken[o.token] = o
		}
		if !o.deadline.IsZero() {
			s.armDeadline(o.deadline)
		}
		s.send(o, nil)
	case waitRelist:
		s.join(gen, true, 0, nil)
		next := s.cat.run
		if next == nil || next.gen != gen {
			s.answerAll(w.ws, s.listingEnded())
			return
		}
		next.waiters = append(next.waiters, w.ws...)
		next.moves = max(next.moves, w.moves)
	}
}

// fail answers w with err: the connection it waited for will not come.
func (s *Server) fail(w *waiter, err *messages.Error) {
	if w.kind == waitRelist {
		s.answerAll(w.ws, err)
		return
	}
	if w.cmd != nil {
		s.emit(Answer{To: w.cmd, Err: err})
	}
}

// Request starts a request (a protocol session's, pinned to its
// generation, only there), connecting first as the lifecycle allows.
func (s *Server) Request(now time.Time, m *messages.Request) []Effect {
	s.input(now)
	if m.Gen == 0 {
		s.withConnection(waiter{kind: waitRequest, token: m.Token, cmd: m, match: m}, m.Origin)
		return s.out
	}
	switch {
	case s.closed:
		s.emit(Answer{To: m, Err: s.shutdownErr()})
	case !s.Bound(m.Gen):
		s.emit(Answer{To: m, Err: messages.Errorf(messages.KindDisconnected, s.cfg.Name, "the connection this protocol session was bound to has ended; connect again")})
	default:
		s.begin(&op{req: m, gen: m.Gen, token: m.Token, kind: opRequest, method: m.Method, params: m.Params,
			origin: m.Origin, pinned: true, stream: m.Stream}, s.deadline(m.Deadline))
	}
	return s.out
}

// ListAll starts a paginated listing for a caller.
func (s *Server) ListAll(now time.Time, m *messages.ListAll) []Effect {
	s.input(now)
	s.withConnection(waiter{kind: waitList, token: m.Token, cmd: m, match: m}, m.Origin)
	return s.out
}

// Connect is an explicit connect: it revives a server kept down, and with
// Fresh replaces a live connection.
func (s *Server) Connect(now time.Time, m *messages.Connect) []Effect {
	s.input(now)
	s.connect(waiter{kind: waitConnect, token: m.Token, cmd: m, match: m}, m.Fresh)
	return s.out
}

// Bind binds a protocol session (cmd, answered with Bind or Answer) to the
// live connection, connecting first as the lifecycle allows.
func (s *Server) Bind(now time.Time, token messages.Token, origin messages.Origin, cmd messages.Failable) []Effect {
	s.input(now)
	s.withConnection(waiter{kind: waitBind, token: token, cmd: cmd, match: cmd}, origin)
	return s.out
}

// Abort answers the command of token with KindAborted: a waiter leaves
// the queue, a refresh's caller stops waiting (the listing goes on for the
// others), an operation is cancelled the transport's way.
func (s *Server) Abort(now time.Time, token messages.Token) []Effect {
	s.input(now)
	err := messages.Errorf(messages.KindAborted, s.cfg.Name, "cancelled by the caller")
	for i, w := range s.waiters {
		if w.token == token {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			s.fail(&w, err)
			return s.out
		}
	}
	if s.abortRefresh(token, err) {
		return s.out
	}
	if o := s.byToken[token]; o != nil {
		s.emit(Cancel{Gen: o.gen, ID: o.id})
		s.finish(o, nil, err)
	}
	return s.out
}

func (s *Server) shutdownErr() *messages.Error {
	return messages.Errorf(messages.KindShutdown, s.cfg.Name, "the runtime is shutting down")
}
