package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/sessions"
	"github.com/mcprt/mcprt/supervisor"
)

// GatewayName is the gateway actor's name on a serving member: sessions
// attach by sending to it.
const GatewayName = "mcprt-gateway"

// DefaultSessionTimeout is how long a session actor waits for a
// heartbeat (or any message) before it ends the session as if it had
// detached: its calls are cancelled, their leases return, its
// subscriptions end. A session whose process dies is noticed sooner, when
// its connection ends (protoactor's endpoint terminated event).
const DefaultSessionTimeout = 5 * time.Second

// maxIdleWorkers bounds the call goroutines kept waiting for the next
// call (pool.go).
const maxIdleWorkers = 32

// DefaultHeartbeat is how often an attached session says it is alive.
const DefaultHeartbeat = time.Second

// ServeOptions configure a Server.
type ServeOptions struct {
	// Listen is host:port to listen on (default 127.0.0.1:0: loopback, a
	// free port). Another host is used only when asked for, and needs
	// TLS (or Plaintext).
	Listen string
	// TLS, when set, makes every session connect with mutual TLS: a
	// certificate signed by TLS.ClientCAFile, and still the token
	// (tls.go). nil: plaintext.
	TLS *ServerTLS
	// Plaintext allows a Listen address beyond loopback without TLS: the
	// token then crosses the network in clear.
	Plaintext bool
	// TokenFile is where the token is written (default
	// DefaultTokenFile(the listening address)). It is removed by Close.
	TokenFile string
	// SessionTimeout bounds a silent session (default
	// DefaultSessionTimeout).
	SessionTimeout time.Duration
	// Clock times the session timeouts (default: the wall clock).
	Clock clock.Clock
	// Logger receives diagnostics (default: silent).
	Logger *slog.Logger
	// Asks are what servers may ask the sessions (ClientHooks; default:
	// nothing).
	Asks Asks
	// Peers are members of the cluster to join (seeds of the membership:
	// membership.go); sessions reach every member's servers by name
	// (peers.go).
	Peers []Peer
	// ClusterTokenFile is the cluster token every member of the cluster
	// presents to the others (default DefaultClusterTokenFile(); created
	// when missing; cluster_auth.go).
	ClusterTokenFile string
	// MemberTimeout bounds a silent member: the others drop it from the
	// membership after it (default DefaultMemberTimeout).
	MemberTimeout time.Duration
	// PeerTLS is mutual TLS for this member's sessions on the other
	// members (nil: plaintext).
	PeerTLS *ClientTLS
	// SessionSubscriptions bounds the subscriptions one session may hold
	// (mcp_events shares and typed ones, those being made included), and
	// SessionCalls its calls in flight; a request beyond either is refused
	// at once with resource_exhausted. 0: sessions.DefaultMaxSubs (25) and
	// sessions.DefaultMaxCalls (64); negative: no limit. Another member's
	// session has none.
	SessionSubscriptions, SessionCalls int
	// ServerRetry is how long after a server failed here (and was
	// withdrawn from the member's view) the member tries it again itself,
	// while it knows other members; then twice as long each time, up to
	// 5 min (default supervisor.DefaultRetryEvery, 30 s; offers.go).
	ServerRetry time.Duration
	// InjectCrash is the crash-injection seam, for tests and simulation
	// only; production never sets it. It is asked before every ordinary
	// message the gateway and the session actors take; true makes that
	// message panic as a bug would (supervise.go).
	InjectCrash messages.CrashInjector
}

// Server is a serving member: the runtime it shares, the remote actor
// system sessions reach it through, and the sessions attached now.
type Server struct {
	opts   ServeOptions
	clock  clock.Clock
	logger *slog.Logger
	router *router

	rt      *mcprt.Runtime
	n       *node
	gateway *actor.PID
	token   string
	file    string
	wrote   bool // the token file was written
	sub     *eventSub
	asks    asks

	calls     sync.WaitGroup // every call goroutine of every session
	pool      *pool          // runs the calls (its workers count in calls)
	member    *provider      // the cluster membership (membership.go)
	offers    *offers        // the servers this member advertises (offers.go)
	peerLinks peerLinks      // this member's sessions on the other members (cluster.go)
	peerSubs  peerSubs       // subscriptions that live on a peer (peers_events.go)
	peerCat   peerCatalogs   // the other members' catalogs, for the mcp tool (peers_catalog.go)
	links     serverLinks    // the session processes' links (server_links.go)
	sock      *socketLinks   // links on the Unix socket beside the token file (link_socket.go)
	watch     changeWatch    // the runtime's changes, told to sessions (server_watch.go)
	protos    memberProtos   // the sessions' protocol extensions (protocol_member.go)
	sup       *supervision   // the gateway's and the session actors' (supervise.go)
	once      sync.Once
}

// eventSub is the endpoint-terminated subscription of a node.
type eventSub struct {
	unsubscribe func()
}

// NewServer makes a Server that is not serving yet: pass Host() to
// mcprt.Start as Options.Host (and ClientHooks() as Options.Client), then
// Serve the runtime. Deliveries and
// notices of the runtime go to the sessions (router.go).
func NewServer(opts ServeOptions) *Server {
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, clock: clock.Or(opts.Clock), logger: logger, router: newRouter(),
		asks: asks{waiting: map[uint64]chan *answerMsg{}, urls: map[string]*actor.PID{}}}
	s.router.limits = sessions.Limits{Subs: limit(opts.SessionSubscriptions, sessions.DefaultMaxSubs),
		Calls: limit(opts.SessionCalls, sessions.DefaultMaxCalls)}
	s.pool = newPool(maxIdleWorkers, &s.calls)
	s.offers = newOffers(supervisor.Retry{Every: opts.ServerRetry})
	s.sup = newSupervision(s.clock, logger, opts.InjectCrash, func(n messages.Notice) { s.router.Notify(ctxBackground, n) })
	return s
}

// Host is the mcprt.Host to start the shared runtime with.
func (s *Server) Host() mcprt.Host { return s.router }

// Serve starts listening and writes the token file. rt must have been
// started with Host() as its host. It returns once the member accepts
// sessions.
func (s *Server) Serve(rt *mcprt.Runtime) error {
	s.rt = rt
	// The token exists before the listener: no peer ever meets a member
	// that has none. It is written under the listening address once known.
	token, err := newToken()
	if err != nil {
		return err
	}
	s.token = token
	if err := CheckListen(s.opts.Listen, s.opts.TLS != nil, s.opts.Plaintext); err != nil {
		return err
	}
	t, err := s.opts.TLS.load()
	if err != nil {
		return err
	}
	if err := s.tokenFirst(); err != nil {
		return err
	}
	s.links.start(s.acceptLink) // links that come early wait for open
	n, err := s.startMember(t, s.open)
	if err != nil {
		s.links.shut()
		s.sock.close()
		s.n, s.sub, s.sock = nil, nil, nil
		if s.wrote {
			_ = os.Remove(s.file)
		}
		return err
	}
	if s.n == nil { // open set it (links read it since)
		s.n = n
	}
	s.watchChanges(rt)
	rt.SetPeers(peersOf{s}) // peers_catalog.go
	return nil
}

// open makes the member ready for sessions once its remote listens: the
// token file under the listening address, the gateway, the end of a
// session whose connection ends.
func (s *Server) open(n *node) (err error) {
	s.n = n
	if err := s.writeToken(n.addr); err != nil {
		return err
	}
	s.listenSocket()
	// Deliveries and notices reach session actors on a pool goroutine, not
	// inline on the runtime's actor that made them (server_links.go).
	s.router.send = func(pid *actor.PID, m any) { s.pool.run(func() { n.sys.Root.Send(pid, m) }) }
	s.gateway, err = n.sys.Root.SpawnNamed(s.gatewayProps(), GatewayName)
	if err != nil {
		return fmt.Errorf("remote: gateway: %w", err)
	}
	// A session whose connection ended is ended at once.
	es := n.sys.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*remote.EndpointTerminatedEvent); ok {
			for _, pid := range s.router.sessionsAt(t.Address) {
				n.sys.Root.Send(pid, sessionEnd{why: "its connection ended"})
			}
		}
	})
	s.sub = &eventSub{unsubscribe: func() { n.sys.EventStream.Unsubscribe(es) }}
	s.links.opened()
	return nil
}

// Addr is the address the member listens on (host:port).
func (s *Server) Addr() string { return s.n.addr }

// TokenFile is the path of the token file sessions read.
func (s *Server) TokenFile() string { return s.file }

// Sessions counts the sessions attached now.
func (s *Server) Sessions() int { return s.router.count() }

// Close ends every session (their calls are cancelled), stops listening,
// waits for the call goroutines and removes the token file. It does not
// close the runtime.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		if s.n == nil {
			s.offers.stop()
			return
		}
		s.rt.SetPeers(nil)
		if s.sub != nil {
			s.sub.unsubscribe()
		}
		s.watch.stop()
		s.sup.close()
		for _, pid := range s.router.all() {
			_ = s.n.sys.Root.StopFuture(pid).Wait()
		}
		s.pool.close()
		s.calls.Wait()
		s.sock.close()
		s.closeLinks()
		s.leaveCluster()
		s.rt.SetPeerOffers(nil) // after the views: none sets them again
		s.offers.stop()         // after the views: no retry starts after it
		for _, p := range s.allLinks() {
			p.close()
		}
		s.n.stop()
		if s.file != "" {
			if rerr := os.Remove(s.file); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				err = rerr
			}
		}
	})
	return err
}

// gatewayActor spawns a session actor for every attach.
type gatewayActor struct {
	srv  *Server
	next uint64
}

func (g *gatewayActor) Receive(ctx actor.Context) {
	m, ok := wireMessage(ctx.Message(), g.srv.logger).(*attachMsg)
	if !ok {
		return
	}
	s := g.srv
	client := m.Client.pid()
	if m.Client.Address == "" || m.Client.ID == "" {
		return // nowhere to answer
	}
	g.next++
	sa := &sessionActor{srv: s, client: client, member: m.Member, calls: map[uint64]context.CancelFunc{}}
	pid, err := ctx.SpawnNamed(s.sessionProps(sa), fmt.Sprintf("session-%d", g.next))
	reply := &attachedMsg{Nonce: m.Nonce, Timeout: durationMs(s.opts.SessionTimeout / time.Millisecond)}
	if err != nil {
		reply.Err = toWireErr(messages.Errorf(messages.KindInternal, "", "spawning the session: %s", err))
	} else {
		reply.Session = refOf(pid) // its actor attached itself to the router when it started
		s.logger.Info("session attached", "session", pid.Id, "client", client.Address)
	}
	if err := s.sendTo(client, reply); err != nil {
		s.logger.Warn("remote: answering an attach", "err", err)
	}
}

// ctxBackground is the parent of every call's context.
var ctxBackground = context.Background()
