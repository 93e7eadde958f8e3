package remote

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// AttachOptions configure Attach.
type AttachOptions struct {
	// Host receives the session's deliveries (its own subscriptions'
	// wakeups) and the shared runtime's notices; nil drops them.
	Host mcprt.Host
	// Client answers what servers ask while this session uses them
	// (roots, elicitation, sampling), for what the member lets servers
	// ask (ServeOptions.Asks); docs/shared.md says which session is asked.
	// Its Progress hook is not used.
	Client mcprt.ClientHooks
	// TokenFile is the serving member's token (default
	// DefaultTokenFile(addr)).
	TokenFile string
	// Listen is where this process's end listens for the member's
	// messages (default 127.0.0.1:0); protoactor's remote answers a
	// sender by connecting to it. Beyond loopback it needs TLS or
	// Plaintext.
	Listen string
	// TLS, when set, is mutual TLS with the member (tls.go); the member
	// must serve TLS. nil: plaintext.
	TLS *ClientTLS
	// Plaintext allows a Listen address beyond loopback without TLS.
	Plaintext bool
	// Heartbeat is how often the session says it is alive (default
	// DefaultHeartbeat).
	Heartbeat time.Duration
	// Clock times the heartbeats (default: the wall clock).
	Clock clock.Clock
	// Logger receives diagnostics (default: silent).
	Logger *slog.Logger
	// InjectCrash is the crash-injection seam, for tests and simulation
	// only; production never sets it. It is asked before every ordinary
	// message this process's receiver takes; true makes that message
	// panic as a bug would (supervise.go).
	InjectCrash messages.CrashInjector

	// member marks a member's session on a peer (peers.go).
	member bool
	// token, when set, is the member's token (a member attaching to
	// another with the token the membership carries).
	token string
}

// Session is an attached session: the host-facing API of a Runtime whose
// tools run on a shared runtime in another process. Its methods are safe
// for concurrent use.
type Session struct {
	addr   string
	n      *node
	clock  clock.Clock
	logger *slog.Logger
	hb     time.Duration
	host   mcprt.Host
	hostMu sync.Mutex // serialises calls into host
	client mcprt.ClientHooks
	roots  sessionRoots // client.Roots until SetRoots (session_parity.go)

	// ctx ends at Close: the hooks answering questions watch it.
	ctx    context.Context
	cancel context.CancelFunc
	asking sync.WaitGroup // the hooks answering questions

	sup     *supervision // the receiver's (supervise.go)
	self    *actor.PID   // this process's receiver
	session *actor.PID   // the session actor on the member
	link    *link        // this session's stream to the member (link.go)

	mu sync.Mutex
	// The fields below are guarded by mu.
	next    uint64
	pending map[uint64]chan *replyMsg
	gone    *messages.Error // set once the member is gone or the session closed
	timer   clock.Timer
	heard   time.Time     // when the member was last heard from
	silence time.Duration // the member is taken for gone after this long unheard
	// askCancels withdraw the questions being answered, by id.
	askCancels map[uint64]context.CancelFunc
	// abandoned are mcp_events subscribes given up before their reply:
	// a late success is let go (session_subs.go, letGo).
	abandoned map[uint64]bool
	// watchers are the session's WatchStatus and WatchTools (session_watch.go).
	watchers watchers
	// tagged are the calls in flight whose context carries a caller tag
	// (mcprt.WithCaller), with their progress so far (session_asks.go).
	tagged map[uint64]*taggedCall
	// protos are the session's protocol extensions (protocol.go).
	protos protoTable

	attached chan *attachedMsg
	once     sync.Once

	// typed are the session's typed subscriptions (session_subscribe.go).
	typed typedSubs
}

// Attach joins the shared runtime serving at addr (host:port) with the
// token from its token file. A wrong or missing token is refused at once
// (ErrUnauthenticated); nothing runs on the member for it.
func Attach(ctx context.Context, addr string, opts AttachOptions) (*Session, error) {
	token, file, err := attachToken(addr, opts)
	if err != nil {
		return nil, err
	}
	listen := opts.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if err := CheckListen(listen, opts.TLS != nil, opts.Plaintext); err != nil {
		return nil, err
	}
	t, err := opts.TLS.load()
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, attachTimeout)
	defer cancel()
	if err := preflight(pctx, addr, token, t); err != nil {
		return nil, err
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	n, err := startNode(listen, token, t, logger)
	if err != nil {
		return nil, err
	}
	s := &Session{addr: addr, n: n, clock: clock.Or(opts.Clock), logger: logger, hb: opts.Heartbeat, host: opts.Host, client: opts.Client,
		pending: map[uint64]chan *replyMsg{}, attached: make(chan *attachedMsg, 1), askCancels: map[uint64]context.CancelFunc{}, abandoned: map[uint64]bool{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.sup = newSupervision(s.clock, logger, opts.InjectCrash, s.notifyHost)
	s.self, err = n.sys.Root.SpawnNamed(s.receiverProps(), receiverName)
	if err != nil {
		n.stop()
		return nil, fmt.Errorf("remote: %w", err)
	}
	sock := ""
	if t == nil && file != "" && loopbackAddr(addr) {
		sock = socketOf(file) // link_socket.go
	}
	s.link, err = dialLink(pctx, n, addr, sock, token, func(error) {
		s.fail(messages.Errorf(messages.KindDisconnected, "", "the shared runtime at %s is gone (its connection ended)", addr))
	})
	if err != nil {
		s.stop()
		return nil, err
	}
	nonce := strconv.FormatUint(uint64(time.Duration(s.clock.Now().UnixNano())), 36)
	if err := s.link.send(actor.NewPID(addr, GatewayName), &attachMsg{Client: refOf(s.self), Nonce: nonce, Member: opts.member}); err != nil {
		s.stop()
		return nil, err
	}
	select {
	case a := <-s.attached:
		if a.Err != nil {
			s.stop()
			return nil, a.Err.toError()
		}
		s.session = a.Session.pid()
		s.mu.Lock()
		s.silence = time.Duration(a.Timeout) * time.Millisecond
		s.mu.Unlock()
	case <-pctx.Done():
		s.stop()
		return nil, fmt.Errorf("remote: the shared runtime at %s did not answer the attach in time", addr)
	}
	s.heardNow()
	s.mu.Lock()
	s.armLocked()
	s.mu.Unlock()
	return s, nil
}

// attachToken is the token Attach presents, and the file it read it from
// ("" when given).
func attachToken(addr string, opts AttachOptions) (token, file string, err error) {
	if opts.token != "" {
		return opts.token, "", nil
	}
	file = opts.TokenFile
	if file == "" {
		if file, err = DefaultTokenFile(addr); err != nil {
			return "", "", err
		}
	}
	token, err = readToken(file)
	return token, file, err
}

// attachTimeout bounds the preflight and the attach.
const attachTimeout = 15 * time.Second

// linkLinger bounds how long Close waits for the member to take the
// session's last messages (the detach) before it closes the connection.
const linkLinger = time.Second

// armLocked schedules the next heartbeat. s.mu is held. The member
// answers every heartbeat, so a member heard from by no message for its
// own session timeout (hung, or partitioned away: no connection ends) is
// taken for gone, as it takes a silent session.
func (s *Session) armLocked() {
	if s.gone != nil {
		return
	}
	s.timer = s.clock.AfterFunc(s.hb, func() {
		s.mu.Lock()
		quiet, limit := s.clock.Now().Sub(s.heard), s.silence
		s.mu.Unlock()
		if limit > 0 && quiet >= limit {
			s.fail(messages.Errorf(messages.KindDisconnected, "", "the shared runtime at %s stopped answering (nothing heard for %s)", s.addr, quiet.Round(time.Millisecond)))
			return
		}
		_ = s.link.send(s.session, heartbeatMsg{})
		s.mu.Lock()
		s.armLocked()
		s.mu.Unlock()
	})
}

// heardNow notes that the member was heard from.
func (s *Session) heardNow() {
	now := s.clock.Now()
	s.mu.Lock()
	s.heard = now
	s.mu.Unlock()
}

// request sends one operation and waits for its reply; the caller's
// context ending cancels it on the member.
func (s *Session) request(ctx context.Context, op, name string, args []byte) ([]byte, error) {
	ch := make(chan *replyMsg, 1)
	s.mu.Lock()
	if s.gone != nil {
		err := s.gone
		s.mu.Unlock()
		return nil, err
	}
	s.next++
	id := s.next
	s.pending[id] = ch
	if c := mcprt.CallerOf(ctx); c != nil {
		s.tag(id, c)
	}
	s.mu.Unlock()
	defer s.untag(id)
	if err := s.link.send(s.session, &requestMsg{ID: id, Op: op, Name: name, Args: args}); err != nil {
		s.drop(id)
		return nil, messages.AsError(err, messages.KindInternal, "")
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err.toError()
		}
		return r.Result, nil
	case <-ctx.Done():
		s.drop(id)
		if op == opTool && name == eventsTool {
			if action, _ := eventsAction(&requestMsg{Op: op, Name: name, Args: args}); action == "subscribe" {
				s.mu.Lock()
				s.abandoned[id] = true
				s.mu.Unlock()
			}
		}
		_ = s.link.send(s.session, &cancelMsg{ID: id})
		return nil, messages.Errorf(messages.KindAborted, "", "the call was cancelled")
	}
}

func (s *Session) drop(id uint64) {
	s.mu.Lock()
	delete(s.pending, id)
	s.mu.Unlock()
}

// answer hands a reply to its waiting caller (none: it was cancelled).
func (s *Session) answer(r *replyMsg) {
	s.mu.Lock()
	ch, ok := s.pending[r.ID]
	delete(s.pending, r.ID)
	late := s.abandoned[r.ID]
	delete(s.abandoned, r.ID)
	s.mu.Unlock()
	if ok {
		ch <- r
	} else if late {
		s.letGo(r)
	}
}

// fail ends the session once: every call in flight gets err (each exactly
// once), and every later call gets it at once.
func (s *Session) fail(err *messages.Error) {
	s.mu.Lock()
	if s.gone != nil {
		s.mu.Unlock()
		return
	}
	s.gone = err
	if s.timer != nil {
		s.timer.Stop()
	}
	pending := s.pending
	s.pending = map[uint64]chan *replyMsg{}
	s.mu.Unlock()
	s.cancel() // the hooks answering questions: nobody waits for them now
	s.endProtos(err)
	if err.Kind != messages.KindShutdown && s.self != nil {
		s.n.sys.Root.Send(s.self, typedLost{err: err}) // their final status
	}
	for id, ch := range pending {
		ch <- &replyMsg{ID: id, Err: toWireErr(err)}
	}
}

// alive reports whether the session still reaches its member.
func (s *Session) alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone == nil
}

// Close detaches: the member ends this session (its calls are cancelled,
// its subscriptions end) and this process's end stops. Calls in flight
// fail with KindShutdown.
func (s *Session) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		wasGone := s.gone != nil
		s.mu.Unlock()
		// Calls in flight fail with shutdown before the detach leaves, so
		// the member's answer to it (ended) cannot reach them first.
		s.fail(messages.Errorf(messages.KindShutdown, "", "the session is closed"))
		if !wasGone && s.session != nil {
			_ = s.link.send(s.session, detachMsg{})
		}
		s.stop()
		s.watchers.closeAll()
	})
	return nil
}

func (s *Session) stop() {
	s.sup.close()
	s.cancel()
	s.asking.Wait()
	if s.link != nil {
		s.link.close(s.clock, linkLinger)
	}
	// Let the detach leave before the connection closes.
	if s.self != nil {
		_ = s.n.sys.Root.StopFuture(s.self).Wait()
	}
	s.n.stop()
}
