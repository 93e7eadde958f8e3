package mcpline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// Filter may answer a request in place of the MCP server. It returns
// handled=true together with the reply to write, or with a nil reply to drop
// the request silently.
type Filter func(method string, id json.RawMessage) (reply any, handled bool)

// inflightCall is one request being handled on its own goroutine.
type inflightCall struct {
	cancel  context.CancelFunc
	done    chan struct{} // closed once the handler has returned
	dropped atomic.Bool   // the peer cancelled it: its response is not sent
}

// conn is one MCP session over a channel that carries whole JSON-RPC
// messages both ways: a line connection (stdio, a socket) or a legacy SSE
// session (POSTs in, the GET stream out). Ordinary messages go to the MCP
// server's session; custom methods go to their Handler.
type conn struct {
	backend  Backend
	id       string
	write    func(msg []byte) error // writes one message; called under writeMu
	filter   Filter
	methods  Methods
	sess     Session         // set by open
	ctx      context.Context // the session's context, set by open
	stop     context.CancelFunc
	handlers sync.WaitGroup

	writeMu sync.Mutex // serialises write

	// severed is set when a custom request disconnects the connection:
	// custom requests write nothing more (frames or ends), while ordinary
	// requests in flight are still answered.
	severed atomic.Bool

	mu       sync.Mutex
	inflight map[string]*inflightCall // guarded by mu
	closing  bool                     // no new requests; guarded by mu
	writeErr error                    // first write error; guarded by mu
}

func newConn(b Backend, write func([]byte) error, opts Options) *conn {
	return &conn{
		backend:  b,
		id:       opts.SessionID,
		write:    write,
		filter:   opts.Filter,
		methods:  opts.Methods,
		inflight: make(map[string]*inflightCall),
	}
}

// open opens the backend's session. The session's context ends when ctx
// ends, a write fails or close is called.
func (c *conn) open(ctx context.Context) error {
	c.ctx, c.stop = context.WithCancel(ctx)
	sess, err := c.backend.Open(c.ctx, c.id, c.writeMsg)
	if err != nil {
		c.stop()
		return fmt.Errorf("open session %q: %w", c.id, err)
	}
	c.sess = sess
	return nil
}

// close refuses new requests, cancels those in flight (their responses are
// still written), waits for every handler and closes the backend's
// session. It returns the first write error.
func (c *conn) close() error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.stop()
	c.handlers.Wait()
	c.sess.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writeErr
}

// dispatch handles one incoming message. Notifications, responses and
// malformed messages are handled inline; each request runs on a goroutine
// of its own. header is the HTTP header the message came with, or nil.
func (c *conn) dispatch(msg []byte, header http.Header) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return
	}
	ctx := withHeader(c.ctx, header)
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(msg, &head); err != nil || head.Method == "" || IsNull(head.ID) {
		if head.Method == CancelledMethod {
			c.peerCancelled(head.Params)
		}
		if resp := c.handle(ctx, nil, msg, header); resp != nil {
			_ = c.writeMsg(resp)
		}
		return
	}
	if c.filter != nil {
		if reply, handled := c.filter(head.Method, head.ID); handled {
			if reply != nil {
				c.reply(reply)
			}
			return
		}
	}

	key := idKey(head.ID)
	callCtx, cancel := context.WithCancel(ctx)
	call := &inflightCall{cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		cancel()
		return
	}
	c.inflight[key] = call
	c.handlers.Add(1)
	c.mu.Unlock()

	h := c.methods[head.Method]
	go func() {
		defer c.handlers.Done()
		defer close(call.done)
		defer cancel()
		if h != nil {
			cc := &Call{
				id: head.ID, method: head.Method, params: head.Params, header: header,
				out:        c.writeCustom,
				suppressed: func() bool { return call.dropped.Load() || c.severed.Load() },
				onEnd:      func(error) { c.forget(key, call) },
				drop:       c.sever,
			}
			cc.run(callCtx, h)
			return
		}
		resp := c.handle(callCtx, head.ID, msg, header)
		c.forget(key, call)
		if resp == nil || call.dropped.Load() {
			return
		}
		_ = c.writeMsg(resp)
	}()
}

// forget removes an ended request from the in-flight table.
func (c *conn) forget(key string, call *inflightCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight[key] == call {
		delete(c.inflight, key)
	}
}

// handle runs the backend's session on one message, turning a panic into
// an internal error response for requests.
func (c *conn) handle(ctx context.Context, id json.RawMessage, msg []byte, header http.Header) (resp []byte) {
	defer func() {
		if r := recover(); r != nil {
			resp = nil
			if len(id) > 0 {
				resp, _ = json.Marshal(NewErrorReply(id, mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", r)))
			}
		}
	}()
	return c.sess.Handle(ctx, msg, header, nil)
}

// peerCancelled handles notifications/cancelled: it cancels the request,
// marks its response to be dropped and waits until its handler has returned.
func (c *conn) peerCancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || IsNull(p.RequestID) {
		return
	}
	c.mu.Lock()
	call := c.inflight[idKey(p.RequestID)]
	c.mu.Unlock()
	if call == nil {
		return
	}
	call.dropped.Store(true)
	call.cancel()
	<-call.done
}

// reply writes v as one message.
func (c *conn) reply(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(NewErrorReply(nil, mcp.INTERNAL_ERROR, "cannot encode message: "+err.Error()))
	}
	_ = c.writeMsg(b)
}

// sever ends the session for a [Call.Disconnect]: custom requests write
// nothing more, and the session stops as if its input had ended.
func (c *conn) sever() {
	c.severed.Store(true)
	c.stop()
}

// writeCustom writes one message of a custom request, unless the connection
// has been severed.
func (c *conn) writeCustom(b []byte) error {
	if c.severed.Load() {
		return errCallClosed
	}
	return c.writeMsg(b)
}

// writeMsg writes one encoded message. The first failure ends the session.
func (c *conn) writeMsg(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	failed := c.writeErr
	c.mu.Unlock()
	if failed != nil {
		return failed
	}
	if err := c.write(b); err != nil {
		c.mu.Lock()
		if c.writeErr == nil {
			c.writeErr = err
		}
		c.mu.Unlock()
		c.stop()
		return err
	}
	return nil
}
