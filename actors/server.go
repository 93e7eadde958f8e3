package actors

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// serverActor owns one configured server: its connections (the live one
// and any still draining) and what it publishes. Every decision (the
// lifecycle, the operations in flight, the waiters behind a dial, the
// deadlines, the catalog refresh) comes from its supervisor.Server; this
// type feeds it the messages it receives and executes the effects it
// returns (server_effects.go).
type serverActor struct {
	env *env
	rec *serverRecord
	cfg ServerConfig
	inc uint64
	me  *actor.PID
	ctx actor.Context // of the message being handled

	core      *supervisor.Server
	conns     map[uint64]messages.Conn // by generation, until ConnClosed
	dial      messages.Dialing         // the dial in progress
	timers    map[supervisor.TimerKind]clock.Timer
	info      messages.ServerInfo
	tools     int       // tools last listed; -1 when unknown
	published statusKey // what was last published to the status board
	restarts  int
	stopping  func() // the Shutdown reply, pending until everything closed
	ext       extState
	// handling is the command being handled, while it is; it stays set when
	// handling it panics. The root supervisor answers that command itself
	// (messages.Failable), so crashed() must not answer it a second time.
	handling messages.Failable
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
	s.ctx = c
	s.dispatch(msg)
	s.handling = nil // not reached when dispatch panics
	if s.core != nil {
		s.checkBindings()
	}
	s.publish()
}

// dispatch handles every message but Restarting.
func (s *serverActor) dispatch(msg any) {
	now := s.now()
	switch m := msg.(type) {
	case *actor.Started:
		s.start(s.ctx.Self())
	case *actor.Stopping:
		s.stopTimers()
	case *messages.Request:
		s.exec(s.core.Request(now, m))
	case *messages.ListAll:
		s.exec(s.core.ListAll(now, m))
	case *Refresh:
		s.exec(s.core.Refresh(now, m.Token, m.Origin, m.Fresh, m.Force, m))
	case relistRefresh:
		if m.incarnation == s.inc {
			s.exec(s.core.Relist(now))
		}
	case *messages.Connect:
		s.exec(s.core.Connect(now, m))
	case *bindSession:
		s.exec(s.core.Bind(now, m.token, m.origin, m))
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
		s.exec(s.core.Abort(now, m.Token))
	case *messages.QueryStatus:
		m.Reply(s.status())
	case *messages.Shutdown:
		s.shutdown(m.Reply)
	case slotGranted:
		s.exec(s.core.SlotGranted(now, m.gen))
	case messages.DialResult:
		s.dialed(m)
	case messages.DialProgress:
		s.exec(s.core.DialProgress(now, m.Gen, m.Installing))
	case messages.OpResult:
		s.exec(s.core.OpResult(now, m))
	case messages.ConnNotification:
		s.notification(m)
	case messages.UserWait:
		s.exec(s.core.UserWait(now, m.Delta))
	case messages.ClientNotify:
		if c := s.conns[s.core.Gen()]; c != nil {
			c.Notify(m.Method, m.Params)
		}
	case messages.ConnClosed:
		delete(s.conns, m.Gen)
		s.exec(s.core.ConnClosed(now, m.Gen, m.Err))
	case messages.LateFrame:
		s.ext.late++
	case messages.UnknownResponse:
		s.ext.unknown++
	case lifeTimer:
		if m.incarnation == s.inc {
			s.exec(s.core.Fire(now, m.kind, m.token))
		}
	}
}

func (s *serverActor) start(me *actor.PID) {
	s.me = me
	inc, lastGen, lastOp, down, restarts := s.rec.begin()
	s.inc, s.restarts = inc, restarts
	s.conns = map[uint64]messages.Conn{}
	closing, left := s.rec.takeOver()
	maps.Copy(s.conns, closing) // closing: shutdown waits for them
	s.timers = map[supervisor.TimerKind]clock.Timer{}
	s.tools = -1
	s.core = supervisor.NewServer(supervisor.ServerConfig{
		Name: s.cfg.Name, Policy: s.cfg.Policy, ListOnConnect: s.cfg.ListOnConnect, MaxPages: catalog.MaxCursors,
		CallTimeout: s.cfg.CallTimeout, CatalogTimeout: s.cfg.CatalogTimeout, HealthTimeout: s.cfg.HealthTimeout, StartupTimeout: s.cfg.StartupTimeout,
		NewListing: func() supervisor.Listing { return catalog.NewListing(s.info.Instructions) },
	}, lastGen, lastOp, sortedGens(s.conns), left)
	s.exec(s.core.Start(s.now(), down))
}

func (s *serverActor) now() time.Time { return s.env.clock.Now() }

// dialed takes the outcome of a dial: its connection, and the server's
// information when it is the dial in progress.
func (s *serverActor) dialed(m messages.DialResult) {
	var caps supervisor.Caps
	if m.Conn != nil {
		s.conns[m.Gen] = m.Conn
		if s.core.DialCurrent(m.Gen) {
			s.info = m.Info
			s.info.Instructions = catalog.CleanText(s.info.Instructions)
			caps = capsOf(s.info.Capabilities)
		}
	}
	s.exec(s.core.Dialed(s.now(), m.Gen, m.Err, m.Conn != nil, caps))
}

// capsOf reads what a refresh lists from a server's capabilities.
func capsOf(raw json.RawMessage) supervisor.Caps {
	var caps struct {
		Resources json.RawMessage `json:"resources"`
		Prompts   json.RawMessage `json:"prompts"`
	}
	_ = json.Unmarshal(raw, &caps)
	has := func(m json.RawMessage) bool { return len(m) > 0 && string(m) != "null" }
	return supervisor.Caps{Resources: has(caps.Resources), Prompts: has(caps.Prompts)}
}

func (s *serverActor) notification(m messages.ConnNotification) {
	s.observe(m)
	switch m.Method {
	case "notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed":
		s.exec(s.core.CatalogChanged(s.now(), m.Gen))
	case "notifications/progress", "notifications/message", "notifications/elicitation/complete":
		// for the host: progress, a log message, the end of a URL-mode
		// elicitation
		if s.env.clientNote != nil && m.Gen == s.core.Gen() {
			s.env.clientNote(messages.ClientNote{Server: s.cfg.Name, Method: m.Method, Params: m.Params})
		}
	}
}

// shutdown closes the server; reply runs once the last ConnClosed has
// arrived. A second shutdown is not answered.
func (s *serverActor) shutdown(reply func()) {
	if s.core.Closed() {
		if s.stopping == nil {
			reply()
		}
		return
	}
	s.stopping = reply
	s.exec(s.core.Shutdown(s.now()))
}

// crashed runs in the crashed instance before protoactor replaces it: the
// core answers every caller but the one the root answers and releases
// every connection and dial; every timer stops. The next instance starts
// with a new incarnation number, so late traffic for this one is
// recognised and dropped; it waits for the connections closed here.
func (s *serverActor) crashed() {
	if s.core == nil {
		return
	}
	s.exec(s.core.Crash(s.now(), s.handling))
	s.stopTimers()
	s.rec.noteOp(s.core.LastOp())
	s.rec.handOver(s.conns, s.core.Handover())
	if s.stopping != nil {
		s.stopping()
	}
}

// sortedGens returns the generations of conns in order.
func sortedGens(conns map[uint64]messages.Conn) []uint64 {
	return slices.Sorted(maps.Keys(conns))
}
