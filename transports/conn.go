package transports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/messages"
)

var errBadURL = errors.New("the url (field url) is not a valid URL")

// connInfo is what error messages may say about a connection.
type connInfo struct {
	server  string
	field   string   // the configuration field that names the endpoint
	secrets []string // configured values, scrubbed from any library text
}

// conn is one open connection: the bridge between a messages.Conn and a
// blocking rpcTransport.
type conn struct {
	connInfo
	d        *Dialer
	gen      uint64
	sink     messages.Sink
	endpoint messages.Endpoint
	ids      *idSource
	sess     *session

	router *router // streams' notifications, by request id

	ctx    context.Context // the connection's lifetime
	cancel context.CancelFunc

	kind   messages.TransportKind
	tr     rpcTransport
	lc     *lineConn         // stdio and socket
	proc   *process          // stdio
	sock   net.Conn          // socket
	http   *limitedTransport // Streamable HTTP and SSE
	client *http.Client      // Streamable HTTP and SSE, over http
	sreq   *serverRequests   // the server's requests to the client

	mu sync.Mutex
	// The fields below are guarded by mu.
	ops    map[messages.OpID]*opState
	open   bool  // DialResult was delivered
	ended  bool  // the transport stopped by itself
	endErr error // why it stopped
	// originErr: the legacy SSE endpoint was announced on another origin.
	originErr error
	closing   bool

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
	maxOp     atomic.Uint64 // the highest operation id sent (see sentID)
}

type opState struct {
	ctx     context.Context // ends when the request is given up or the connection ends
	cancel  context.CancelFunc
	aborted bool   // guarded by conn.mu
	reqID   string // the JSON-RPC id of the request on the wire
	// serverCancelled: the server sent notifications/cancelled for this
	// stream; guarded by conn.mu.
	serverCancelled bool
	// sent reports a stream's request written (nil for plain requests).
	sent func()
	// completed: the outcome has been reported (see complete).
	completed atomic.Bool

	// 2026-07-28 multi round-trip requests (mrtr.go): the rounds so far
	// (guarded by conn.mu) and the original params every retry starts from.
	rounds int
	orig   json.RawMessage
	// reissues: how often it was sent again after its response stream
	// broke (2026-07-28, mrtr.go); guarded by conn.mu.
	reissues int

	// stdio and sockets only (see startLine):
	key     string     // reqID as the line codec keys it
	written bool       // the request is on the wire; guarded by conn.mu
	finish  completion // completes the request; set before written
}

var _ messages.Conn = (*conn)(nil)

// newConn prepares a connection attempt whose lifetime is a child of the
// dial's context: cancelling the dial ends it, releasing it ends only it.
func newConn(d *Dialer, req messages.DialRequest, sink messages.Sink, dialCtx context.Context) *conn {
	ctx, cancel := context.WithCancel(dialCtx)
	field := map[messages.TransportKind]string{messages.TransportStdio: "command", messages.TransportHTTP: "url", messages.TransportSocket: "socket"}[req.Endpoint.Kind()]
	c := &conn{
		connInfo: connInfo{server: req.Server, field: field, secrets: secretsOf(req.Endpoint)},
		d:        d, gen: req.Gen, sink: sink, endpoint: req.Endpoint,
		ids:    &idSource{prefix: req.IDPrefix},
		router: newRouter(req.IDPrefix+"-", func() { sink(messages.LateFrame{Server: req.Server, Gen: req.Gen}) }),
		sess:   &session{client: mcp.Implementation{Name: req.ClientName, Version: req.ClientVersion}},
		ctx:    ctx, cancel: cancel,
		ops: make(map[messages.OpID]*opState), work: make(chan func()),
	}
	c.sess.caps = d.Capabilities
	c.sess.logLevel = req.Endpoint.LogLevel
	c.sreq = &serverRequests{server: req.Server, gen: req.Gen, handler: d.ServerRequests, ctx: ctx, spawn: c.spawnOp, answer: c.answerServer}
	return c
}

// Send starts one request on a worker goroutine of the connection.
func (c *conn) Send(op messages.Op) {
	// Made before c.mu is taken: with many callers, Send's critical
	// section was the connection's most contended lock.
	ctx, cancel := context.WithCancel(c.ctx)
	st := &opState{ctx: ctx, cancel: cancel, reqID: c.ids.forOp(op.ID)}
	c.mu.Lock()
	if c.closing || c.ended {
		c.mu.Unlock()
		cancel()
		c.sink(messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, NotSent: true,
			Err: messages.Errorf(messages.KindDisconnected, c.server, "connection closed")})
		return
	}
	if uint64(op.ID) > c.maxOp.Load() {
		c.maxOp.Store(uint64(op.ID)) // under mu: Sends are ordered
	}
	c.ops[op.ID] = st
	c.opsWG.Add(1)
	c.mu.Unlock()
	if op.Stream != nil {
		c.openStream(op, st) // routed before the request can be written
	}
	if c.lc != nil {
		c.startLine(op, st)
		return
	}
	job := func() {
		defer c.recoverOp(op, st, "request worker")
		c.complete(op, st, c.run(ctx, op, st))
	}
	// The waiting caller runs the exchange on its own goroutine when it
	// can (messages.Assist), else a worker of the connection does.
	if !op.Assist.Offer(job, func() { c.dispatch(job) }) {
		c.dispatch(job)
	}
}

// complete reports a request's outcome and forgets it; only its first
// outcome counts.
func (c *conn) complete(op messages.Op, st *opState, res messages.OpResult) {
	if c.sess.modern && res.Err == nil && mrtrMethods[op.Method] && c.inputRound(op, st, &res) {
		return // answered input_required: the retry completes it
	}
	if c.sess.modern && res.OnlyThis && res.Err != nil && c.lc == nil && op.Stream == nil && c.reissue(op, st) {
		return // the stream broke: the new request completes it
	}
	if !st.completed.CompareAndSwap(false, true) {
		return
	}
	st.cancel()
	if op.Stream != nil {
		c.router.unregister(st.reqID)
	}
	c.mu.Lock()
	delete(c.ops, op.ID)
	c.mu.Unlock()
	c.sink(res)
	c.opsWG.Done()
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
		c.spawn("connection worker", func() {
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

// prepare builds the JSON-RPC request of op.
func (c *conn) prepare(op messages.Op, st *opState) (rpcRequest, *messages.Error) {
	if len(op.Params) > MaxFrame {
		return rpcRequest{}, messages.Errorf(messages.KindInvalidArgs, c.server, "request params over 16 MiB")
	}
	params, header, err := c.sess.prepare(op.Method, op.Params)
	if err != nil {
		return rpcRequest{}, messages.Errorf(messages.KindInvalidArgs, c.server, "request params must be a JSON object")
	}
	return rpcRequest{ID: st.reqID, Method: op.Method, Params: params, Header: header}, nil
}

// run sends one request on a blocking transport (HTTP, legacy SSE) and
// returns its outcome.
func (c *conn) run(ctx context.Context, op messages.Op, st *opState) messages.OpResult {
	req, perr := c.prepare(op, st)
	if perr != nil {
		return messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, Err: perr}
	}
	slot := &statusSlot{Context: ctx, sent: st.sent, reqID: st.reqID, conn: c, caller: op.Caller}
	resp, err := c.tr.SendRequest(slot, req)
	res := c.outcome(op, st, resp, err, slot)
	if res.Err != nil && res.Err.Kind == messages.KindAborted {
		c.sendCancelled(st)
	}
	return res
}

// startLine sends one request on a stdio or socket connection without
// waiting for its answer, on the caller's goroutine when the pipe or socket
// takes the frame at once (the common case: no goroutine hand-off), else on
// a worker. The reader completes the request when the response comes, so
// the response reaches the actor straight from the reader. A cancellation
// that arrived before the write finished is handled after it, so
// notifications/cancelled always follows the request it cancels.
func (c *conn) startLine(op messages.Op, st *opState) {
	req, perr := c.prepare(op, st)
	if perr != nil {
		c.complete(op, st, messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, Err: perr})
		return
	}
	st.key = req.ID
	c.mu.Lock()
	round := st.rounds
	c.mu.Unlock()
	st.finish = func(resp *rpcResponse, err error) {
		if err == nil {
			c.complete(op, st, c.outcome(op, st, resp, nil, nil))
			return
		}
		// Explaining a failure may wait for the child's exit status: not
		// on the reader's (or the actor's) goroutine.
		c.d.spawn(func() {
			defer c.recoverOp(op, st, "request completion")
			c.complete(op, st, c.outcome(op, st, nil, err, nil))
		})
	}
	rest, err := c.lc.startRequestNow(req, st.finish)
	switch {
	case errors.Is(err, errNotWritten):
		c.d.spawn(func() {
			defer c.recoverOp(op, st, "request completion")
			res := c.outcome(op, st, nil, err, nil)
			res.NotSent = true
			c.complete(op, st, res)
		})
	case err != nil:
		st.finish(nil, err)
	case rest == nil:
		c.written(op, st, round, false)
	default:
		c.dispatch(func() {
			defer c.recoverOp(op, st, "request writer")
			if err := rest(); err != nil {
				st.finish(nil, err)
				return
			}
			c.written(op, st, round, true)
		})
	}
}

// written records that a request is on the wire and, if it was cancelled
// meanwhile, completes it as aborted and tells the server (directly when
// on a worker, else on a goroutine of its own). round is st.rounds when
// the request was sent: if the server's input_required answer was already
// read and an input round began (mrtr.go), the request is no longer on the
// wire, and marking it written would make a cancellation look for a
// response instead of ending the round's wait for the host.
func (c *conn) written(op messages.Op, st *opState, round int, onWorker bool) {
	c.mu.Lock()
	if st.rounds == round {
		st.written = true
	}
	aborted := st.aborted
	c.mu.Unlock()
	if st.sent != nil {
		st.sent()
	}
	if !aborted || !c.lc.abandon(st.key) {
		return
	}
	c.complete(op, st, messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, Err: messages.Errorf(messages.KindAborted, c.server, "cancelled")})
	if onWorker {
		c.sendCancelled(st)
	} else {
		c.background(func() { c.sendCancelled(st) })
	}
}

// Close closes the connection; ConnClosed (with a nil Err) follows.
func (c *conn) Close() {
	c.d.spawn(func() { c.shutdown(nil) })
}

// lost ends the connection because the transport failed; the first cause
// is the one reported.
func (c *conn) lost(cause error) {
	c.mu.Lock()
	if c.closing || !c.open || c.ended {
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

// onWriteFail is called by the line codec when a write to the server
// failed: a server that stopped reading (it closed its stdin, or shut the
// socket's read side) cannot be talked to any more, even if it still
// writes, so the connection ends. Writes the runtime's own closing broke
// change nothing (lost ignores them).
func (c *conn) onWriteFail(err error) {
	c.lost(fmt.Errorf("%w: %w", errStoppedReading, err))
}

// shutdown releases everything once and reports ConnClosed with reason.
// A panic while releasing still reports ConnClosed, with an internal error.
func (c *conn) shutdown(reason *messages.Error) {
	c.closeOnce.Do(func() {
		reported := false
		defer func() {
			if p := recovered("connection shutdown", recover()); p != nil && !reported {
				c.noteMu.Lock()
				c.noteState = notesClosed
				c.sink(messages.ConnClosed{Server: c.server, Gen: c.gen, Err: c.d.internalError(c.server, p)})
				c.noteMu.Unlock()
			}
		}()
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
		reported = true
		c.sink(messages.ConnClosed{Server: c.server, Gen: c.gen, Err: reason})
		c.noteMu.Unlock()
	})
}
