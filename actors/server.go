package actors

import (
	"encoding/json"
	"maps"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// serverActor owns one configured server: its lifecycle, its connections
// (the live one and any still draining), and every operation in flight on
// them. Decisions come from supervisor.Lifecycle; this type executes them.
type serverActor struct {
	env *env
	rec *serverRecord
	cfg ServerConfig
	inc uint64
	me  *actor.PID

	life        *supervisor.Lifecycle
	conns       map[uint64]messages.Conn // by generation, until ConnClosed
	dial        messages.Dialing         // the dial in progress
	dialGen     uint64                   // its generation; 0 when none
	slotGen     uint64                   // generation holding a start slot; 0 when none
	startup     clock.Timer
	timers      map[supervisor.TimerKind]clock.Timer
	deadlines   deadlines
	waits       userWaits // requests waiting for a person: deadlines stand still
	info        messages.ServerInfo
	waiters     []*waiter
	ops         map[messages.OpID]*op
	byToken     map[messages.Token]*op
	tools       int             // tools last listed; -1 when unknown
	refresh     *refreshRun     // the catalog listing in progress, if any
	moving      []refreshWaiter // callers of a listing being moved to a new connection
	movingMoves int
	catGen      uint64          // the connection generation the catalog was last listed on
	catStale    bool            // a list changed since
	catErr      *messages.Error // why the last tools listing failed on catErrGen (nil: it did not)
	catErrGen   uint64
	published   statusKey // what was last published to the status board
	restarts    int
	closed      bool
	stopping    func() // the Shutdown reply, pending until everything closed
	ext         extState
	// handling is the command being handled, while it is; it stays set when
	// handling it panics. The root supervisor answers that command itself
	// (messages.Failable), so crashed() must not answer it a second time.
	handling messages.Failable
	owed     owed // the port's outcomes still on their way (server_unsettled.go)
}

// waiter is an operation waiting for a connection.
type waiter struct {
	cmd   messages.Failable // the command it answers
	token messages.Token
	run   func(gen uint64)
	fail  func(*messages.Error)
}

func newServerActor(e *env, rec *serverRecord) actor.Producer {
	return func() actor.Actor {
		return &serverActor{env: e, rec: rec, cfg: rec.cfg}
	}
}

// Receive dispatches one message.
func (s *serverActor) Receive(c actor.Context) {
	msg := c.Message()
	if _, ok := msg.(*actor.Restarting); ok {
		s.crashed()
		return
	}
	s.env.maybeCrash(messages.ActorServer, msg)
	s.handling, _ = msg.(messages.Failable)
	s.dispatch(c, msg)
	s.handling = nil // not reached when dispatch panics
	if s.life != nil {
		s.checkBindings()
	}
	s.publish()
}

// dispatch handles every message but Restarting.
func (s *serverActor) dispatch(c actor.Context, msg any) {
	switch m := msg.(type) {
	case *actor.Started:
		s.start(c.Self())
	case *actor.Stopping:
		s.stopTimers()
	case *messages.Request:
		s.request(m)
	case *messages.ListAll:
		s.listAll(m)
	case *Refresh:
		s.refreshCmd(m)
	case relistRefresh:
		if m.incarnation == s.inc {
			s.relist()
		}
	case *messages.Connect:
		s.connect(m)
	case *bindSession:
		s.bind(c, m)
	case *sessionCmd:
		s.forward(m)
	case unbind:
		delete(s.ext.sessions, m.pid)
		s.env.send(m.pid, unbound{})
	case watchCmd:
		s.watch(m)
	case unwatchCmd:
		s.unwatch(m.token)
	case *messages.Abort:
		s.abort(m.Token)
	case *messages.QueryStatus:
		m.Reply(s.status())
	case *messages.Shutdown:
		s.shutdown(m.Reply)
	case slotGranted:
		s.slotGranted(m.gen)
	case messages.DialResult:
		s.dialed(m)
	case messages.DialProgress:
		s.dialProgress(m)
	case messages.OpResult:
		s.opDone(m)
	case messages.ConnNotification:
		s.notification(m)
	case messages.UserWait:
		s.userWait(m)
	case messages.ClientNotify:
		if c := s.conns[s.life.Gen()]; c != nil {
			c.Notify(m.Method, m.Params)
		}
	case messages.ConnClosed:
		s.connClosed(m)
	case messages.LateFrame:
		s.ext.late++
	case messages.UnknownResponse:
		s.ext.unknown++
	case lifeTimer:
		if m.incarnation == s.inc {
			s.exec(s.life.Fire(s.now(), m.kind, m.token))
		}
	case startupTimeout:
		if m.incarnation == s.inc {
			s.startupExpired(m.gen)
		}
	case deadlineTimer:
		if m.incarnation == s.inc {
			s.deadlinesDue(m.token)
		}
	}
}

func (s *serverActor) start(me *actor.PID) {
	s.me = me
	var lastGen uint64
	var down *messages.Error
	s.inc, lastGen, _, down, s.restarts = s.rec.begin()
	s.life = supervisor.New(s.cfg.Name, s.cfg.Policy)
	s.life.ContinueFrom(lastGen)
	s.life.Remember(s.rec.recall()) // a crash does not reset failure memory or backoff
	s.conns = map[uint64]messages.Conn{}
	closing, owed := s.rec.takeOver()
	maps.Copy(s.conns, closing) // closing: shutdown waits for them
	s.owed = owed               // and for the outcomes still on their way
	s.timers = map[supervisor.TimerKind]clock.Timer{}
	s.ops = map[messages.OpID]*op{}
	s.byToken = map[messages.Token]*op{}
	s.tools = -1
	if down != nil {
		s.life.SetDown(down)
		return
	}
	s.exec(s.life.Start(s.now()))
}

func (s *serverActor) now() time.Time { return s.env.clock.Now() }

// exec runs the lifecycle's effects in order.
func (s *serverActor) exec(effects []supervisor.Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case supervisor.Dial:
			s.rec.noteGen(e.Gen)
			s.env.send(s.env.root, acquireSlot{pid: s.me, gen: e.Gen})
		case supervisor.CancelDial:
			if s.dialGen == e.Gen && s.dial != nil {
				s.dial.Cancel()
			}
		case supervisor.CloseConn:
			if c := s.conns[e.Gen]; c != nil {
				c.Close()
			}
		case supervisor.Arm:
			s.stopTimer(e.Kind)
			s.timers[e.Kind] = s.env.after(e.After, s.me, lifeTimer{incarnation: s.inc, kind: e.Kind, token: e.Token})
		case supervisor.Disarm:
			s.stopTimer(e.Kind)
		case supervisor.ReleaseWaiters:
			ws := s.waiters
			s.waiters = nil
			for _, w := range ws {
				w.run(e.Gen)
			}
		case supervisor.FailWaiters:
			ws := s.waiters
			s.waiters = nil
			for _, w := range ws {
				w.fail(e.Err)
			}
		case supervisor.HealthCheck:
			s.startHealth(e.Gen)
		}
	}
}

func (s *serverActor) stopTimer(kind supervisor.TimerKind) {
	if t := s.timers[kind]; t != nil {
		t.Stop()
		delete(s.timers, kind)
	}
}

func (s *serverActor) stopTimers() {
	for k := range s.timers {
		s.stopTimer(k)
	}
	if s.startup != nil {
		s.startup.Stop()
		s.startup = nil
	}
	s.stopDeadlines()
}

// slotGranted dials generation gen if it is still wanted.
func (s *serverActor) slotGranted(gen uint64) {
	if s.closed || gen != s.life.Gen() || s.dialGen != 0 || s.life.State(s.now()) != messages.StateConnecting {
		s.env.send(s.env.root, releaseSlot{pid: s.me, gen: gen})
		return
	}
	s.slotGen, s.dialGen = gen, gen
	s.dial = s.env.dialer.Dial(messages.DialRequest{
		Server: s.cfg.Name, Gen: gen, Endpoint: s.cfg.Endpoint,
		IDPrefix:   "mcprt-" + clock.HexID(s.env.rand, 6),
		ClientName: s.env.clientName, ClientVersion: s.env.clientVersion,
	}, s.env.sinkFor(s.me))
	s.dialing(gen)
	s.startup = s.env.after(s.cfg.StartupTimeout, s.me, startupTimeout{incarnation: s.inc, gen: gen})
}

// endDial forgets the dial of gen and returns its start slot.
func (s *serverActor) endDial(gen uint64) {
	if s.dialGen == gen {
		s.dialGen, s.dial = 0, nil
		if s.startup != nil {
			s.startup.Stop()
			s.startup = nil
		}
	}
	if s.slotGen == gen {
		s.slotGen = 0
		s.env.send(s.env.root, releaseSlot{pid: s.me, gen: gen})
	}
}

func (s *serverActor) dialed(m messages.DialResult) {
	delete(s.owed.dials, m.Gen)
	defer s.maybeStopped() // shutdown may have waited for this outcome
	wasCurrent := s.dialGen == m.Gen
	s.endDial(m.Gen)
	if m.Conn != nil {
		s.conns[m.Gen] = m.Conn
		if wasCurrent {
			s.info = m.Info
			s.info.Instructions = catalog.CleanText(s.info.Instructions)
		}
	}
	if !wasCurrent && m.Err != nil {
		return // a dial already given up on (timed out, cancelled, older incarnation)
	}
	s.exec(s.life.Dialed(s.now(), m.Gen, m.Err))
	if m.Err == nil && wasCurrent {
		s.env.catalog.setInstructions(s.cfg.Name, s.info.Instructions)
		if s.cfg.ListOnConnect && s.life.Connected(m.Gen) && !s.closed {
			// A new connection lists the catalog; callers waiting for one
			// join this listing.
			s.joinRefresh(m.Gen, false, 0, func(*messages.Error) {})
		}
	}
}

// dialProgress holds the startup deadline while the dial installs the
// server's package (which has a budget of its own, kept by the dialer) and
// arms it afresh once the server itself starts.
func (s *serverActor) dialProgress(m messages.DialProgress) {
	if s.dialGen != m.Gen || s.closed {
		return
	}
	if s.startup != nil {
		s.startup.Stop()
		s.startup = nil
	}
	if !m.Installing {
		s.startup = s.env.after(s.cfg.StartupTimeout, s.me, startupTimeout{incarnation: s.inc, gen: m.Gen})
	}
}

func (s *serverActor) startupExpired(gen uint64) {
	if s.dialGen != gen {
		return
	}
	if s.dial != nil {
		s.dial.Cancel()
	}
	s.endDial(gen)
	err := messages.Errorf(messages.KindInitTimeout, s.cfg.Name, "server did not finish starting within %s (startupTimeoutMs)", s.cfg.StartupTimeout)
	s.exec(s.life.Dialed(s.now(), gen, err))
}

func (s *serverActor) connClosed(m messages.ConnClosed) {
	delete(s.conns, m.Gen)
	reason := m.Err
	if reason == nil {
		reason = messages.Errorf(messages.KindDisconnected, s.cfg.Name, "connection closed")
	}
	// An operation still waiting on gen was sent after the port posted this ConnClosed, so never
	// written (server_unsettled.go): one that may move goes to a new connection after life.Closed.
	var moving []*op
	for _, o := range s.sortedOps() {
		if o.gen != m.Gen {
			continue
		}
		if s.unsettledOn(o.id, o.gen) && s.movable(o) {
			moving = append(moving, o)
			continue
		}
		s.finish(o, nil, reason)
	}
	s.exec(s.life.Closed(s.now(), m.Gen, m.Err))
	for _, o := range moving {
		s.resend(o)
	}
	s.maybeStopped()
}

// connLost handles a request that failed because its connection ended, when
// the connection's ConnClosed has not arrived yet: closing a transport can
// take a while (a child process gets time to exit), and calls made meanwhile
// must go to a new connection rather than into the dead one, where they
// would fail without ever being sent. The lifecycle treats the generation as
// closed now. The connection is asked to close (a no-op if it is closing
// already) and stays in s.conns until its ConnClosed, so that shutdown still
// waits for its process to be reaped.
func (s *serverActor) connLost(gen uint64, reason *messages.Error) {
	if !s.life.Connected(gen) {
		return
	}
	if c := s.conns[gen]; c != nil {
		c.Close()
	}
	s.exec(s.life.Closed(s.now(), gen, reason))
}

func (s *serverActor) notification(m messages.ConnNotification) {
	s.observe(m)
	switch m.Method {
	case "notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed":
		if m.Gen == s.life.Gen() {
			s.catalogChanged(m.Gen)
		}
	case "notifications/progress", "notifications/message", "notifications/elicitation/complete":
		s.clientNote(m)
	}
}

// toolsListed records a successful tools/list made on a caller's behalf,
// for status and the catalog.
func (s *serverActor) toolsListed(items []json.RawMessage) {
	if err := catalog.CheckList("tools", items); err != nil {
		s.env.catalog.setFailed(s.cfg.Name, messages.Errorf(messages.KindProtocol, s.cfg.Name, "%s", err))
		return
	}
	tools, rejected, err := catalog.AdmitTools(items)
	if err != nil {
		s.env.catalog.setFailed(s.cfg.Name, messages.Errorf(messages.KindProtocol, s.cfg.Name, "tools catalog: %s", err))
		return
	}
	s.tools = len(tools)
	s.env.catalog.setTools(s.cfg.Name, tools, rejected, s.now())
}
