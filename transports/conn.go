package transports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/messages"
)

// noCeiling replaces mcp-go's per-request response timeout on legacy SSE
// (60 s by default): deadlines are the runtime's business, not the
// transport's.
const noCeiling = 100 * 365 * 24 * time.Hour

var errBadURL = errors.New("the url (field url) is not a valid URL")

// connInfo is what error messages may say about a connection.
type connInfo struct {
	server  string
	field   string   // the configuration field that names the endpoint
	secrets []string // configured values, scrubbed from any library text
}

// conn is one open connection: the bridge between a messages.Conn and a
// blocking mcp-go transport.
type conn struct {
	connInfo
	d        *Dialer
	gen      uint64
	sink     messages.Sink
	endpoint messages.Endpoint
	ids      *idSource
	sess     *session

	ctx    context.Context // the connection's lifetime
	cancel context.CancelFunc

	kind messages.TransportKind
	tr   transport.Interface
	lc   *lineConn         // stdio and socket
	proc *process          // stdio
	sock net.Conn          // socket
	http *limitedTransport // Streamable HTTP and SSE

	mu sync.Mutex
	// The fields below are guarded by mu.
	ops     map[messages.OpID]*opState
	open    bool  // DialResult was delivered
	ended   bool  // the transport stopped by itself
	endErr  error // why it stopped
	closing bool

	// noteMu orders notifications with the DialResult and ConnClosed:
	// those that arrive before the DialResult is delivered wait in early,
	// those that arrive after ConnClosed are dropped.
	noteMu    sync.Mutex
	noteState int                         // guarded by noteMu: notesEarly, notesOpen or notesClosed
	early     []messages.ConnNotification // guarded by noteMu

	work      chan func() // hands requests to idle workers
	opsWG     sync.WaitGroup
	closeOnce sync.Once
	released  atomic.Bool
}

type opState struct {
	cancel  context.CancelFunc
	aborted bool // guarded by conn.mu
	reqID   mcp.RequestId
}

var _ messages.Conn = (*conn)(nil)

// newConn prepares a connection attempt whose lifetime is a child of the
// dial's context: cancelling the dial ends it, releasing it ends only it.
func newConn(d *Dialer, req messages.DialRequest, sink messages.Sink, dialCtx context.Context) *conn {
	ctx, cancel := context.WithCancel(dialCtx)
	field := map[messages.TransportKind]string{messages.TransportStdio: "command", messages.TransportHTTP: "url", messages.TransportSocket: "socket"}[req.Endpoint.Kind()]
	return &conn{
		connInfo: connInfo{server: req.Server, field: field, secrets: secretsOf(req.Endpoint)},
		d:        d, gen: req.Gen, sink: sink, endpoint: req.Endpoint,
		ids:  &idSource{prefix: req.IDPrefix},
		sess: &session{client: mcp.Implementation{Name: req.ClientName, Version: req.ClientVersion}},
		ctx:  ctx, cancel: cancel,
		ops: make(map[messages.OpID]*opState), work: make(chan func()),
	}
}

// Send starts one request on a worker goroutine of the connection.
func (c *conn) Send(op messages.Op) {
	c.mu.Lock()
	if c.closing || c.ended {
		c.mu.Unlock()
		c.sink(messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, Err: messages.Errorf(messages.KindDisconnected, c.server, "connection closed")})
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	st := &opState{cancel: cancel, reqID: c.ids.forOp(op.ID)}
	c.ops[op.ID] = st
	c.opsWG.Add(1)
	c.mu.Unlock()
	c.dispatch(func() {
		defer c.opsWG.Done()
		res := c.run(ctx, op, st)
		cancel()
		c.mu.Lock()
		delete(c.ops, op.ID)
		c.mu.Unlock()
		c.sink(res)
	})
}

// dispatch runs job on an idle worker of this connection, or on a new one.
// Workers live until the connection's context ends, so a request runs on a
// goroutine whose stack has already grown to what the transport needs
// (a fresh goroutine per request spends measurable time growing its stack
// inside net/http).
func (c *conn) dispatch(job func()) {
	select {
	case c.work <- job:
	default:
		c.d.spawn(func() {
			for {
				job()
				select {
				case job = <-c.work:
				case <-c.ctx.Done():
					return
				}
			}
		})
	}
}

func (c *conn) run(ctx context.Context, op messages.Op, st *opState) messages.OpResult {
	res := messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID}
	if len(op.Params) > MaxFrame {
		res.Err = messages.Errorf(messages.KindInvalidArgs, c.server, "request params over 16 MiB")
		return res
	}
	params, header, err := c.sess.prepare(op.Method, op.Params)
	if err != nil {
		res.Err = messages.Errorf(messages.KindInvalidArgs, c.server, "request params must be a JSON object")
		return res
	}
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: st.reqID, Method: op.Method, Header: header}
	if len(params) > 0 {
		req.Params = params
	}
	slot := &statusSlot{}
	resp, err := c.tr.SendRequest(withSlot(ctx, slot), req)
	c.mu.Lock()
	aborted, closing, ended := st.aborted, c.closing, c.ended
	c.mu.Unlock()
	switch {
	case err == nil && resp.Error != nil:
		res.Err = c.rpcError(resp.Error)
	case err == nil:
		res.Result = resp.Result
	case aborted:
		c.sendCancelled(st)
		res.Err = messages.Errorf(messages.KindAborted, c.server, "cancelled")
	case c.lc != nil && c.lc.endedByPeer():
		// The server ended the stream (exit, EOF, protocol violation): that,
		// not the closing it caused, is why the request failed.
		res.Err = c.lineEndError()
	case ended:
		// The transport failed (an SSE stream broke or carried an oversized
		// event) and closing it ended this request: report the failure.
		res.Err = c.endError()
	case closing:
		res.Err = messages.Errorf(messages.KindDisconnected, c.server, "connection closed")
	default:
		res.Err = c.opError(err, slot)
	}
	return res
}

// opError classifies a failed request. On HTTP, a failure that means the
// server is gone (refused, session ended, stream broke) also ends the
// connection, so the next call reconnects instead of failing the same way.
func (c *conn) opError(err error, slot *statusSlot) *messages.Error {
	if s := slot.status.Load(); s >= 400 {
		err = fmt.Errorf("%w: %w", &statusError{int(s)}, err)
	}
	e := c.classify(messages.KindDisconnected, err)
	if c.kind == messages.TransportHTTP || c.kind == messages.TransportSSE {
		if e.Kind == messages.KindDisconnected || errors.Is(err, errHTTPUnreachable(err)) {
			c.lost(err)
		}
	}
	return e
}

// errHTTPUnreachable returns err itself when it says the server cannot be
// reached at all (so errors.Is matches), and a sentinel that matches nothing
// otherwise.
func errHTTPUnreachable(err error) error {
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return err
	}
	return errNever
}

var errNever = errors.New("transports: never")

// Cancel gives up on one request the way its transport requires.
func (c *conn) Cancel(id messages.OpID) {
	c.mu.Lock()
	st := c.ops[id]
	if st != nil {
		st.aborted = true
	}
	c.mu.Unlock()
	if st == nil {
		return
	}
	// The request's goroutine sees its context end and, on transports
	// that need it, sends notifications/cancelled itself: only it knows
	// the request has been written, so the cancellation can never reach
	// the server before the request it cancels.
	st.cancel()
}

// sendCancelled tells the server a request was given up, on transports
// where the response would come on a shared channel (stdio, sockets,
// legacy SSE). On Streamable HTTP aborting the exchange is the
// cancellation, and nothing is sent.
func (c *conn) sendCancelled(st *opState) {
	if c.kind == messages.TransportHTTP {
		return
	}
	params := map[string]any{"requestId": st.reqID, "reason": "cancelled by the client"}
	_ = c.tr.SendNotification(c.ctx, notification(string(mcp.MethodNotificationCancelled), params))
}

// background runs f on a goroutine that shutdown waits for, unless the
// connection is closing (then f is dropped: there is nobody to send to).
func (c *conn) background(f func()) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.opsWG.Add(1)
	c.mu.Unlock()
	c.d.spawn(func() {
		defer c.opsWG.Done()
		f()
	})
}

// Notify sends a notification on its own goroutine.
func (c *conn) Notify(method string, params json.RawMessage) {
	var fields map[string]any
	if len(params) > 0 && json.Unmarshal(params, &fields) != nil {
		return
	}
	c.background(func() { _ = c.tr.SendNotification(c.ctx, notification(method, fields)) })
}

func notification(method string, fields map[string]any) mcp.JSONRPCNotification {
	return mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: fields}}}
}

// Close closes the connection; ConnClosed (with a nil Err) follows.
func (c *conn) Close() {
	c.d.spawn(func() { c.shutdown(nil) })
}

// lost ends the connection because the transport failed.
func (c *conn) lost(cause error) {
	c.mu.Lock()
	if c.closing || !c.open {
		if !c.open && !c.ended {
			c.ended, c.endErr = true, cause
		}
		c.mu.Unlock()
		return
	}
	c.ended, c.endErr = true, cause
	c.mu.Unlock()
	c.d.spawn(func() { c.shutdown(c.endError()) })
}

// markOpen records that the DialResult has been delivered; if the transport
// already ended meanwhile, the connection closes now.
func (c *conn) markOpen() {
	c.noteMu.Lock()
	for _, n := range c.early {
		c.sink(n)
	}
	c.early, c.noteState = nil, notesOpen
	c.noteMu.Unlock()
	c.mu.Lock()
	c.open = true
	ended := c.ended
	c.mu.Unlock()
	if ended {
		c.d.spawn(func() { c.shutdown(c.endError()) })
	}
}

// shutdown releases everything once and reports ConnClosed with reason.
func (c *conn) shutdown(reason *messages.Error) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.release()
		c.opsWG.Wait()
		c.closeIdle() // connections the last requests handed back
		if reason != nil && c.proc != nil {
			reason = c.endError() // the exit status is known now
		}
		c.noteMu.Lock() // a late notification from an HTTP reader is dropped
		c.noteState = notesClosed
		c.sink(messages.ConnClosed{Server: c.server, Gen: c.gen, Err: reason})
		c.noteMu.Unlock()
	})
}
