package actors

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// System is a running set of actors: the root supervisor and one server
// actor per configured server. Its methods are safe for concurrent use.
type System struct {
	env     *env
	records map[string]*serverRecord
	names   []string
	tokens  atomic.Uint64
	closing atomic.Bool

	protocols protocols     // protocols.go
	events    *Events       // events_api.go
	done      chan struct{} // closed when every actor has stopped
	closed    chan struct{} // closed when Close starts
	// closeErr is Close's result; written before done is closed.
	closeErr error

	rootStopped chan struct{} // closed when the root actor has stopped
}

// guardian routes a server actor's crash to the root actor. protoactor
// calls it on the crashed actor's goroutine; it only posts a message.
type guardian struct {
	env   *env
	byPID map[string]*serverRecord
}

func (g *guardian) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	if rec := g.byPID[child.Id]; rec != nil {
		g.env.send(g.env.root, childFailed{rec: rec, sup: sup, reason: reason, message: message})
		return
	}
	if child.Id == eventsActorID {
		g.env.send(g.env.root, eventsFailed{sup: sup, pid: child, reason: reason})
	}
}

// Start spawns the actors. Eager and keep-alive servers begin connecting at
// once; Start itself never waits for I/O.
func Start(cfg Config) (*System, error) {
	if cfg.Dialer == nil {
		return nil, errors.New("actors: Config.Dialer is required")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dispatcher := cfg.Dispatcher
	if dispatcher == nil {
		dispatcher = actor.NewSynchronizedDispatcher(dispatchThroughput)
	}
	policy := supervisor.DefaultRestartPolicy
	if cfg.Restart != nil {
		policy = *cfg.Restart
	}
	maxStarts := cfg.MaxStarts
	if maxStarts <= 0 {
		maxStarts = DefaultMaxStarts
	}
	system := actor.NewActorSystem(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger.With("lib", "protoactor") }),
		actor.WithDeadLetterRequestLogging(false),
	)
	e := &env{
		clock: clock.Or(cfg.Clock), rand: clock.OrRand(cfg.Rand), dialer: cfg.Dialer, dispatcher: dispatcher,
		system: system, catalog: newCatalog(), clientName: cfg.ClientName, clientVersion: cfg.ClientVersion, clientNote: cfg.ClientNote,
		board:       &statusBoard{byName: map[string]messages.ServerStatus{}},
		crashPolicy: supervisor.CrashPolicy{Restart: policy}, inject: cfg.InjectCrash, notify: cfg.Notify, logger: logger,
	}
	s := &System{env: e, records: map[string]*serverRecord{}, done: make(chan struct{}), closed: make(chan struct{}), rootStopped: make(chan struct{})}
	e.closing = &s.closing
	g := &guardian{env: e, byPID: map[string]*serverRecord{}}
	var records []*serverRecord
	for i, sc := range cfg.Servers {
		if sc.Name == "" {
			return nil, errors.New("actors: a server has no name")
		}
		if s.records[sc.Name] != nil {
			return nil, fmt.Errorf("actors: server %q is configured twice", sc.Name)
		}
		rec := &serverRecord{cfg: sc.withDefaults()}
		initial := messages.StateIdle
		if sc.Policy.Disabled {
			initial = messages.StateDisabled
		}
		e.board.byName[sc.Name] = messages.ServerStatus{Name: sc.Name, State: initial, Lifecycle: sc.Policy.Mode.String(), ToolCount: -1}
		s.records[sc.Name] = rec
		s.names = append(s.names, sc.Name)
		records = append(records, rec)
		g.byPID["mcprt/server/"+strconv.Itoa(i)] = rec
	}
	e.seedCatalog(cfg, logger)
	e.catalog.onChange, e.board.onChange = cfg.OnChange, cfg.OnChange
	root := &rootActor{env: e, policy: policy, records: records, logger: logger, maxStarts: maxStarts,
		holders: map[slotKey]bool{}, stopped: func() { close(s.rootStopped) }}
	rootPID, err := system.Root.SpawnNamed(e.props(func() actor.Actor { return root }), "mcprt/root")
	if err != nil {
		return nil, fmt.Errorf("actors: spawn root: %w", err)
	}
	e.root = rootPID
	spawner := system.Root.WithGuardian(g)
	for i, rec := range records {
		pid, err := spawner.SpawnNamed(e.props(newServerActor(e, rec), actor.WithSupervisor(&endOnCrash{env: e, kind: messages.ActorSession})), "mcprt/server/"+strconv.Itoa(i))
		if err != nil {
			return nil, fmt.Errorf("actors: spawn server %q: %w", rec.cfg.Name, err)
		}
		rec.mu.Lock()
		rec.pid = pid
		rec.mu.Unlock()
	}
	if err := s.startEvents(cfg, spawner); err != nil {
		return nil, fmt.Errorf("actors: start the events companion: %w", err)
	}
	return s, nil
}

// Names returns the configured server names in configuration order.
func (s *System) Names() []string { return append([]string(nil), s.names...) }

// Catalog returns the in-memory tool catalog.
func (s *System) Catalog() *Catalog { return s.env.catalog }

// Clock returns the injected clock.
func (s *System) Clock() clock.Clock { return s.env.clock }

// NewToken returns a fresh operation token.
func (s *System) NewToken() messages.Token { return messages.Token(s.tokens.Add(1)) }

// pid returns the actor of server, or an error when it is not configured
// or the system is closing.
func (s *System) pid(server string) (*actor.PID, *messages.Error) {
	if s.closing.Load() {
		return nil, messages.Errorf(messages.KindShutdown, server, "the runtime is shutting down")
	}
	rec := s.records[server]
	if rec == nil {
		return nil, messages.Errorf(messages.KindServerNotFound, "", "no server named %q is configured", server)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.pid, nil
}

// Post sends a command (a *messages.Request, *messages.ListAll,
// *messages.Connect, *messages.Abort or *messages.QueryStatus) to a server's
// actor without waiting. The command's Reply still runs exactly once; if the
// server is unknown or the system is closing it runs at once with the
// error. The simulator and the blocking helpers below are built on it.
func (s *System) Post(server string, cmd any) {
	pid, err := s.pid(server)
	if err != nil {
		if f, ok := cmd.(messages.Failable); ok {
			f.Fail(err)
		}
		return
	}
	s.env.send(pid, cmd)
}

// Closing reports whether Close has been called.
func (s *System) Closing() bool { return s.closing.Load() }
