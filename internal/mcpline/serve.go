package mcpline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// MaxLine bounds one incoming JSON-RPC line.
const MaxLine = 64 << 20

// notificationBuffer is the capacity of a session's notification channel.
// mcp-go drops a notification when the channel is full, so it is generous.
const notificationBuffer = 1024

// barrierMethod marks an internal flush marker on a session's notification
// channel. It is consumed by the pump and never reaches the peer.
const barrierMethod = "$mcprt/barrier"

// Filter may answer a request in place of the MCP server. It returns
// handled=true together with the reply to write, or with a nil reply to drop
// the request silently.
type Filter func(method string, id json.RawMessage) (reply any, handled bool)

// inflightCall is one request being handled on its own goroutine.
type inflightCall struct {
	cancel  context.CancelFunc
	done    chan struct{} // closed once the response is written or dropped
	dropped atomic.Bool   // the peer cancelled it: its response is not sent
}

// lineConn serves one newline-delimited JSON-RPC connection.
type lineConn struct {
	srv      *server.MCPServer
	out      io.Writer
	filter   Filter
	sess     *lineSession
	stop     context.CancelFunc
	pumpGone chan struct{} // closed when the notification pump has exited
	handlers sync.WaitGroup

	writeMu sync.Mutex // serialises writes to out

	mu       sync.Mutex
	inflight map[string]*inflightCall // guarded by mu
	writeErr error                    // first write error; guarded by mu
}

// serveLines serves MCP over newline-delimited JSON-RPC until in ends, ctx
// ends or a write to out fails. Notifications and responses from the peer
// are handled in order on the calling goroutine; each request runs on its
// own goroutine. A notifications/cancelled for an in-flight request cancels
// its context, drops its response and waits for its handler to return before
// the next line is read. When Serve returns, every handler it started
// has returned. The goroutine reading in stays blocked in Read until in
// yields or is closed.
func Serve(ctx context.Context, srv *server.MCPServer, sessionID string, in io.Reader, out io.Writer, filter Filter) error {
	c := &lineConn{
		srv:      srv,
		out:      out,
		filter:   filter,
		sess:     &lineSession{id: sessionID, ch: make(chan mcp.JSONRPCNotification, notificationBuffer)},
		pumpGone: make(chan struct{}),
		inflight: make(map[string]*inflightCall),
	}
	if err := srv.RegisterSession(ctx, c.sess); err != nil {
		return fmt.Errorf("register session %q: %w", sessionID, err)
	}
	defer srv.UnregisterSession(ctx, sessionID)

	ctx, c.stop = context.WithCancel(srv.WithContext(ctx, c.sess))
	defer c.stop()

	pumpStop := make(chan struct{})
	go c.pump(pumpStop)

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go readLines(in, lines, readErr, ctx.Done())

	err := c.loop(ctx, lines, readErr)

	c.cancelAll()
	c.handlers.Wait()
	close(pumpStop)
	<-c.pumpGone

	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		err = c.writeErr
	}
	return err
}

// readLines sends each line of in on lines, then the scanner's error (nil at
// end of input) on errc, then closes lines.
func readLines(in io.Reader, lines chan<- []byte, errc chan<- error, done <-chan struct{}) {
	defer close(lines)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	for sc.Scan() {
		select {
		case lines <- bytes.Clone(sc.Bytes()):
		case <-done:
			return
		}
	}
	errc <- sc.Err()
}

func (c *lineConn) loop(ctx context.Context, lines <-chan []byte, readErr <-chan error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				select {
				case err := <-readErr:
					return err
				default:
					return nil
				}
			}
			c.dispatch(ctx, line)
		}
	}
}

func (c *lineConn) dispatch(ctx context.Context, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &head); err != nil || head.Method == "" || IsNull(head.ID) {
		// Notifications, responses and malformed lines: inline, in order.
		if head.Method == string(mcp.MethodNotificationCancelled) {
			c.peerCancelled(head.Params)
		}
		if resp := c.handle(ctx, nil, line); resp != nil {
			c.reply(resp)
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
	c.inflight[key] = call
	c.mu.Unlock()

	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		defer close(call.done)
		defer cancel()
		resp := c.handle(callCtx, head.ID, line)
		c.mu.Lock()
		if c.inflight[key] == call {
			delete(c.inflight, key)
		}
		c.mu.Unlock()
		if resp == nil || call.dropped.Load() {
			return
		}
		c.flushNotifications()
		c.reply(resp)
	}()
}

// handle runs the MCP server on one message, turning a panic into an
// internal error response for requests.
func (c *lineConn) handle(ctx context.Context, id json.RawMessage, line []byte) (resp any) {
	defer func() {
		if r := recover(); r != nil {
			resp = nil
			if len(id) > 0 {
				resp = NewErrorReply(id, mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", r))
			}
		}
	}()
	if msg := c.srv.HandleMessage(ctx, line); msg != nil {
		return msg
	}
	return nil
}

// peerCancelled handles notifications/cancelled: it cancels the request,
// marks its response to be dropped and waits until its handler has finished.
func (c *lineConn) peerCancelled(params json.RawMessage) {
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

// cancelAll cancels every in-flight request (their responses are still sent).
func (c *lineConn) cancelAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, call := range c.inflight {
		call.cancel()
	}
}

// pump writes the session's notifications until stop is closed, then writes
// whatever is still queued and exits.
func (c *lineConn) pump(stop <-chan struct{}) {
	defer close(c.pumpGone)
	for {
		select {
		case n := <-c.sess.ch:
			c.forward(n)
		case <-stop:
			for {
				select {
				case n := <-c.sess.ch:
					c.forward(n)
				default:
					return
				}
			}
		}
	}
}

func (c *lineConn) forward(n mcp.JSONRPCNotification) {
	if n.Method == barrierMethod {
		if ack, ok := n.Params.AdditionalFields["ack"].(chan struct{}); ok {
			close(ack)
		}
		return
	}
	c.reply(n)
}

// flushNotifications returns once every notification queued before the call
// has been written, so that notifications a handler sent precede its response.
func (c *lineConn) flushNotifications() {
	ack := make(chan struct{})
	marker := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: barrierMethod,
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"ack": ack}},
		},
	}
	select {
	case c.sess.ch <- marker:
	case <-c.pumpGone:
		return
	}
	select {
	case <-ack:
	case <-c.pumpGone:
	}
}

// reply writes v as one JSON line.
func (c *lineConn) reply(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(NewErrorReply(nil, mcp.INTERNAL_ERROR, "cannot encode message: "+err.Error()))
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.out.Write(append(b, '\n')); err != nil {
		c.mu.Lock()
		if c.writeErr == nil {
			c.writeErr = err
		}
		c.mu.Unlock()
		c.stop()
	}
}
