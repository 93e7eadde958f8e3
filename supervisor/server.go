package supervisor

import (
	"maps"
	"slices"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// ServerConfig is what a Server needs of its server's configuration.
type ServerConfig struct {
	Name   string
	Policy Policy
	// CallTimeout, CatalogTimeout and HealthTimeout bound a call, all the
	// pages of one listing and a keep-alive health check; StartupTimeout
	// bounds a dial through its handshake.
	CallTimeout, CatalogTimeout, HealthTimeout, StartupTimeout time.Duration
	// ListOnConnect lists the catalog on every new connection.
	ListOnConnect bool
	// MaxPages bounds the pagination cursors of one listing (the catalog
	// limit).
	MaxPages int
	// NewListing returns an empty catalog listing for a refresh that starts
	// (see Listing). It is called synchronously and must be pure.
	NewListing func() Listing
}

// Caps is what a connection's server advertised that a catalog refresh
// looks at.
type Caps struct {
	Resources, Prompts bool
}

// Server holds the decisions of one server actor: its Lifecycle, the dial
// in progress and its start slot, the connections still open, the
// operations in flight (ids, leases, deadlines, resends), the commands
// waiting behind a dial, and the single-flight catalog refresh. Like the
// Lifecycle it is a pure state machine: every input carries "now" and
// returns the effects the actor executes, in order (see the package
// comment). The effects returned are valid until the next input.
type Server struct {
	cfg  ServerConfig
	life *Lifecycle
	now  time.Time // of the input being handled
	out  []Effect

	closed   bool // Shutdown began
	stopping bool // a shutdown waits for the last connection and dial
	open     map[uint64]bool
	dialGen  uint64 // the generation being dialed; 0 when none
	slotGen  uint64 // the generation holding a start slot; 0 when none
	caps     Caps   // of the live connection

	waiters []waiter
	ops     map[messages.OpID]*op
	byToken map[messages.Token]*op
	lastOp  messages.OpID
	// owed are the outcomes the port has still to send (unsettled.go).
	owed  owed
	dl    deadlines
	waits userWaits

	cat catalogState
}

// NewServer returns the core of a server actor instance. lastGen and
// lastOp are the highest generation and operation id its server used
// before (a restarted actor continues after them, so stale traffic is
// recognised); open are the generations a crashed instance left closing
// and h what else it handed over (Crash).
func NewServer(cfg ServerConfig, lastGen uint64, lastOp messages.OpID, open []uint64, h Handover) *Server {
	s := &Server{cfg: cfg, life: New(cfg.Name, cfg.Policy), lastOp: lastOp,
		open: map[uint64]bool{}, ops: map[messages.OpID]*op{}, byToken: map[messages.Token]*op{},
		owed: owed{sends: map[messages.OpID]uint64{}, dials: map[uint64]bool{}}}
	s.life.ContinueFrom(lastGen)
	s.life.Remember(h.Memory) // a crash does not reset failure memory or backoff
	maps.Copy(s.owed.sends, h.Sends)
	maps.Copy(s.owed.dials, h.Dials)
	for _, g := range open {
		s.open[g] = true
	}
	return s
}

// input starts handling one input at now.
func (s *Server) input(now time.Time) {
	s.now = now
	clear(s.out)
	s.out = s.out[:0]
}

func (s *Server) emit(e Effect) { s.out = append(s.out, e) }

// run takes the lifecycle's effects: the waiters and health checks are the
// Server's own business; the rest goes to the actor.
func (s *Server) run(effects []Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case ReleaseWaiters:
			ws := s.waiters
			s.waiters = nil
			for i := range ws {
				s.ready(&ws[i], e.Gen)
			}
		case FailWaiters:
			ws := s.waiters
			s.waiters = nil
			for i := range ws {
				s.fail(&ws[i], e.Err)
			}
		case HealthCheck:
			s.begin(&op{gen: e.Gen, kind: opHealth, method: "tools/list"}, s.cfg.HealthTimeout)
		case CancelDial:
			if s.dialGen == e.Gen && e.Gen != 0 {
				s.emit(e)
			}
		default:
			s.emit(e)
		}
	}
}

// Start begins the instance: eager and keep-alive servers connect now. A
// non-nil down keeps the server down (its actor crashed too often).
func (s *Server) Start(now time.Time, down *messages.Error) []Effect {
	s.input(now)
	if down != nil {
		s.life.SetDown(down)
		return s.out
	}
	s.run(s.life.Start(now))
	return s.out
}

// Fire reports that the timer of kind armed with token fired.
func (s *Server) Fire(now time.Time, kind TimerKind, token uint64) []Effect {
	s.input(now)
	switch kind {
	case TimerStartup:
		s.startupExpired(token)
	case TimerDeadline:
		s.deadlinesDue(token)
	default:
		s.run(s.life.Fire(now, kind, token))
	}
	return s.out
}

// ConnClosed reports that connection gen has ended (err nil: closed on
// request). Its operations fail.
func (s *Server) ConnClosed(now time.Time, gen uint64, err *messages.Error) []Effect {
	s.input(now)
	delete(s.open, gen)
	reason := err
	if reason == nil {
		reason = messages.Errorf(messages.KindDisconnected, s.cfg.Name, "connection closed")
	}
	// An operation still waiting on gen was sent after the port posted this
	// ConnClosed, so never written (unsettled.go): one that may move goes
	// to a new connection once the lifecycle knows gen is gone.
	var moving []*op
	for _, o := range s.sortedOps() {
		if o.gen != gen {
			continue
		}
		if s.unsettledOn(o.id, o.gen) && s.movable(o) {
			moving = append(moving, o)
			continue
		}
		s.finish(o, nil, reason)
	}
	s.run(s.life.Closed(now, gen, err))
	for _, o := range moving {
		s.resend(o)
	}
	s.maybeStopped()
	return s.out
}

// connLost handles a request that failed because its connection ended,
// when the connection's ConnClosed has not arrived yet: closing a transport
// can take a while (a child process gets time to exit), and calls made
// meanwhile must go to a new connection rather than into the dead one,
// where they would fail without ever being sent. The lifecycle treats the
// generation as closed now; the connection is asked to close (a no-op if it
// is closing already) and stays open until its ConnClosed, so that
// shutdown still waits for its process to be reaped.
func (s *Server) connLost(gen uint64, reason *messages.Error) {
	if !s.life.Connected(gen) {
		return
	}
	s.emit(CloseConn{Gen: gen})
	s.run(s.life.Closed(s.now, gen, reason))
}

// Acquire records a lease on generation gen held outside the operation
// table (a notification observer).
func (s *Server) Acquire(now time.Time, gen uint64) []Effect {
	s.input(now)
	s.run(s.life.Acquire(gen))
	return s.out
}

// Release returns a lease taken with Acquire.
func (s *Server) Release(now time.Time, gen uint64) []Effect {
	s.input(now)
	s.run(s.life.Release(now, gen))
	return s.out
}

// Closed reports whether Shutdown has begun.
func (s *Server) Closed() bool { return s.closed }

// Gen returns the newest connection generation.
func (s *Server) Gen() uint64 { return s.life.Gen() }

// Bound reports whether generation gen is the live connection and open:
// protocol sessions bound to it may use it.
func (s *Server) Bound(gen uint64) bool { return s.life.Connected(gen) && s.open[gen] }

// State is the status a user sees.
func (s *Server) State(now time.Time) messages.ServerState {
	if s.closed {
		return messages.StateClosed
	}
	return s.life.State(now)
}

// Leases returns the number of leases on the current connection.
func (s *Server) Leases() int { return s.life.Leases() }

// FailedAt returns when a remembered connect failure happened.
func (s *Server) FailedAt(now time.Time) time.Time { return s.life.FailedAt(now) }

// LastError returns the last connect or connection error, if any.
func (s *Server) LastError() *messages.Error { return s.life.LastError() }

// LastOp returns the highest operation id used.
func (s *Server) LastOp() messages.OpID { return s.lastOp }

// OpenGens returns the generations still open, in order.
func (s *Server) OpenGens() []uint64 {
	gens := make([]uint64, 0, len(s.open))
	for g := range s.open {
		gens = append(gens, g)
	}
	slices.Sort(gens)
	return gens
}
