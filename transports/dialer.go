package transports

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// Dialer is the production connection port: it opens real connections and
// bridges their blocking I/O to messages delivered through a Sink.
//
// Goroutines: one per dial, one per in-flight request, the transports' own
// readers, and one shutdown goroutine per closing connection. All are
// counted; Wait returns when every one of them has ended.
type Dialer struct {
	// Clock times the grace periods of process termination.
	Clock clock.Clock
	// Stderr, when set, receives each stderr line of stdio servers whose
	// endpoint has Debug set. It must not block.
	Stderr func(server, line string)
	// Logger receives transport-library diagnostics; nil discards them.
	Logger *slog.Logger
	// ServerRequests answers requests servers send to the client
	// (elicitation, sampling, roots); nil answers every method but ping
	// with -32601.
	ServerRequests messages.ServerRequestHandler
	// Capabilities is the client capabilities object sent in every
	// handshake (and, on 2026-07-28, with every request); nil sends {}.
	Capabilities json.RawMessage
	// HTTPAuth, when set, gives the HTTP connections of a server (by name)
	// a wrapper for their round tripper: how OAuth attaches its token and
	// answers a 401 (see httpauth.go). nil, or a nil result, wraps nothing.
	HTTPAuth func(server string) func(http.RoundTripper) http.RoundTripper
	// Notify, when set, receives what a dial waits for and when it is done
	// ("installing @scope/pkg with npm ..."). It must not block.
	Notify func(server, text string)
	// NpxInstallTimeout is the budget of an npx package's first install
	// (DefaultNpxInstallTimeout when zero); see npxinstall.go.
	NpxInstallTimeout time.Duration
	// ResponseBudget bounds the response bytes in flight on every HTTP
	// connection of this Dialer together (see budget.go): 0 is
	// DefaultResponseBudget, a negative value means no budget. Set it
	// before the first Dial.
	ResponseBudget int64

	budgetOnce sync.Once
	budget     *budget

	wg       sync.WaitGroup
	installs installs
}

var _ messages.Dialer = (*Dialer)(nil)

// Wait blocks until every goroutine the dialer started has returned. Call
// it after every connection has reported ConnClosed.
func (d *Dialer) Wait() { d.wg.Wait() }

// WaitFor is Wait bounded by d on the injected clock; it reports whether
// everything ended in time.
func (d *Dialer) WaitFor(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	return waitClosed(d.clock(), done, timeout)
}

func (d *Dialer) clock() clock.Clock { return clock.Or(d.Clock) }

// responseBudget is the Dialer's one budget, made on first use.
func (d *Dialer) responseBudget() *budget {
	d.budgetOnce.Do(func() { d.budget = newBudget(d.ResponseBudget) })
	return d.budget
}

func (d *Dialer) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (d *Dialer) spawn(f func()) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f()
	}()
}

// dialing is a dial in progress.
type dialing struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	done   bool // guarded by mu: the outcome is decided
}

// Cancel abandons the dial if it has not finished. Once the connection has
// been handed over it does nothing: the dial's context is the connection's
// parent, and cancelling it then would cripple a live connection.
func (g *dialing) Cancel() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.done {
		g.cancel()
	}
}

// finish decides the dial's outcome; it reports whether Cancel came first.
func (g *dialing) finish(ctx context.Context) (cancelled bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done = true
	return ctx.Err() != nil
}

// Dial opens a connection on a goroutine and reports the DialResult to sink.
func (d *Dialer) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	ctx, cancel := context.WithCancel(context.Background())
	g := &dialing{cancel: cancel}
	d.spawn(func() {
		var cur *conn // the attempt in progress, released if the dial panics
		delivered := false
		defer func() {
			p := recovered("dial", recover())
			switch {
			case p == nil:
			case delivered:
				cur.lost(p)
			default:
				e := d.internalError(req.Server, p)
				if cur != nil {
					cur.release()
				}
				cancel()
				sink(messages.DialResult{Server: req.Server, Gen: req.Gen, Err: e})
			}
		}()
		c, info, err := d.open(ctx, req, sink, &cur)
		if g.finish(ctx) && err == nil {
			c.release() // cancelled just as the handshake ended
			err = messages.Errorf(messages.KindAborted, req.Server, "connect cancelled")
		}
		if err != nil {
			cancel()
			sink(messages.DialResult{Server: req.Server, Gen: req.Gen, Err: err})
			return
		}
		delivered = true
		sink(messages.DialResult{Server: req.Server, Gen: req.Gen, Conn: c, Info: info})
		c.markOpen()
	})
	return g
}

// open builds the transport, starts it and runs the handshake. On failure
// everything it started is released before it returns. cur always holds
// the attempt in progress.
func (d *Dialer) open(ctx context.Context, req messages.DialRequest, sink messages.Sink, cur **conn) (*conn, messages.ServerInfo, *messages.Error) {
	if err := d.resolveSecrets(ctx, &req); err != nil {
		return nil, messages.ServerInfo{}, err
	}
	ep := req.Endpoint
	if ep.Kind() == messages.TransportStdio {
		if err := d.ensureNpx(ctx, req, childEnv(ep, os.LookupEnv), sink); err != nil {
			return nil, messages.ServerInfo{}, err
		}
	}
	c := newConn(d, req, sink, ctx)
	*cur = c
	var err error
	switch ep.Kind() {
	case messages.TransportStdio:
		err = c.openStdio()
	case messages.TransportSocket:
		err = c.openSocket(ctx)
	case messages.TransportHTTP:
		err = c.openHTTP(false)
	default:
		return nil, messages.ServerInfo{}, messages.Errorf(messages.KindConfig, req.Server, "no command, url or socket configured")
	}
	if err != nil {
		return nil, messages.ServerInfo{}, c.classify(messages.KindConnectFailed, err)
	}
	info, herr := c.start(ctx, ep.ProtocolVersion)
	// Legacy HTTP+SSE predates 2026-07-28: a connection pinned to it does
	// not fall back (it would silently speak 2025-11-25).
	pinnedModern := ep.ProtocolVersion == messages.Protocol20260728
	if herr != nil && ep.Kind() == messages.TransportHTTP && !pinnedModern && c.fallbackToSSE(herr) {
		c.release()
		c = newConn(d, req, sink, ctx)
		*cur = c
		if err := c.openHTTP(true); err != nil {
			return nil, messages.ServerInfo{}, c.classify(messages.KindConnectFailed, err)
		}
		info, herr = c.start(ctx, messages.Protocol20251125)
	}
	if herr != nil {
		c.release()
		if ctx.Err() != nil {
			return nil, messages.ServerInfo{}, messages.Errorf(messages.KindAborted, req.Server, "connect cancelled")
		}
		e := c.handshakeError(herr)
		if ep.Kind() == messages.TransportHTTP && pinnedModern && c.fallbackToSSE(herr) {
			e.Message += "; legacy HTTP+SSE cannot carry the pinned protocol " + messages.Protocol20260728
		}
		return nil, messages.ServerInfo{}, e
	}
	info.Transport = c.kind
	if c.kind == messages.TransportHTTP && !c.sess.modern {
		c.startGETStream(ctx)
	}
	if c.sess.modern {
		c.startListen(ctx, info.Capabilities)
	}
	c.setLogLevel(ctx, info)
	return c, info, nil
}

// start starts the transport and negotiates the protocol.
func (c *conn) start(ctx context.Context, pv string) (messages.ServerInfo, error) {
	if err := c.tr.Start(c.ctx); err != nil {
		if oe := c.originError(); oe != nil {
			return messages.ServerInfo{}, oe
		}
		return messages.ServerInfo{}, c.withStatus(err)
	}
	info, err := handshake(ctx, c.tr, c.ids, pv, c.sess)
	return info, c.withStatus(err)
}

// originFailed records that a legacy SSE server announced its message
// endpoint on another origin and ends the wait for it.
func (c *conn) originFailed(err error) {
	c.mu.Lock()
	if c.originErr == nil {
		c.originErr = err
	}
	c.mu.Unlock()
	c.cancel()
}

func (c *conn) originError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.originErr
}

// fallbackToSSE reports whether a failed Streamable HTTP handshake means the
// endpoint speaks only legacy HTTP+SSE: it refused the POST with 404, 405
// or 406.
func (c *conn) fallbackToSSE(err error) bool {
	if errors.Is(err, errSessionLost) {
		// initialize was answered with a session: the server speaks
		// Streamable HTTP, and a later 404 means it lost that session
		// (a legacy SSE attempt would wait for ever on its GET stream).
		return false
	}
	switch c.statusOf(err) {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotAcceptable:
		return true
	}
	return false
}

func (c *conn) openStdio() error {
	var mirror func(string)
	if c.endpoint.Debug && c.d.Stderr != nil {
		server, sink := c.server, c.d.Stderr
		mirror = func(line string) { sink(server, line) }
	}
	p, err := startProcess(c.endpoint, mirror)
	if err != nil {
		return err
	}
	c.proc = p
	c.kind = messages.TransportStdio
	c.lc = newLineConn(p.stdout, p.stdin, c.onNotification, c.onReadEnd)
	c.lc.onServerRequest = c.sreq.serve
	c.lc.onWriteFail, c.lc.onUnmatched = c.onWriteFail, c.onLineResponse
	c.tr = c.lc
	return nil
}

func (c *conn) openSocket(ctx context.Context) error {
	var dialer net.Dialer
	nc, err := dialer.DialContext(ctx, "unix", c.endpoint.Socket)
	if err != nil {
		return err
	}
	c.sock = nc
	c.kind = messages.TransportSocket
	c.lc = newLineConn(nc, nc.(*net.UnixConn), c.onNotification, c.onReadEnd)
	c.lc.onServerRequest = c.sreq.serve
	c.lc.onWriteFail, c.lc.onUnmatched = c.onWriteFail, c.onLineResponse
	c.tr = c.lc
	return nil
}

func (c *conn) openHTTP(legacySSE bool) error {
	base := http.DefaultTransport.(*http.Transport).Clone()
	// Concurrent calls each hold one keep-alive connection; keeping only
	// the default 2 idle would make every burst dial anew.
	base.MaxIdleConnsPerHost = maxIdlePerHost
	c.http = &limitedTransport{base: base, claim: c.router.claim, router: c.router, legacy: legacySSE, fail: c.originFailed, budget: c.d.responseBudget(),
		foreign: c.foreignResponse, unknown: c.unknownResponse, serverRequest: c.sreq.serveFor}
	client := &http.Client{Transport: c.d.wrapAuth(c.server, c.http), CheckRedirect: checkRedirect}
	c.client = client
	if legacySSE {
		sse, err := newLegacySSE(c.endpoint.URL, client, c.endpoint.Headers, c.onNotification, c.onSSELost)
		if err != nil {
			return errBadURL
		}
		c.tr, c.kind = sse, messages.TransportSSE
		return nil
	}
	sh, err := newStreamable(c.endpoint.URL, client, c.endpoint.Headers, c.d.Clock, c.onNotification)
	if err != nil {
		return errBadURL
	}
	c.tr, c.kind = sh, messages.TransportHTTP
	c.sess.http = true
	return nil
}

var _ io.Closer = (*net.UnixConn)(nil)
