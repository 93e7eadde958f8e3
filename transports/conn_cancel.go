package transports

import (
	"bytes"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/jsonscan"
	"github.com/mcprt/mcprt/messages"
)

// Cancel gives up on one request the way its transport requires.
func (c *conn) Cancel(id messages.OpID) {
	c.mu.Lock()
	st := c.ops[id]
	written := false
	if st != nil {
		st.aborted = true
		written = st.written
	}
	c.mu.Unlock()
	if st == nil {
		return
	}
	if c.lc == nil {
		// The request's goroutine sees its context end and, on legacy SSE,
		// sends notifications/cancelled itself after its request was
		// written; on Streamable HTTP aborting the exchange is the
		// cancellation.
		st.cancel()
		return
	}
	if !written {
		// startLine finishes it once the write is done; a request waiting
		// on its inputs (mrtr.go) stops waiting.
		st.cancel()
		return
	}
	if c.lc.abandon(st.key) {
		c.complete(opFor(id), st, messages.OpResult{Server: c.server, Gen: c.gen, ID: id, Err: messages.Errorf(messages.KindAborted, c.server, "cancelled")})
		c.background(func() { c.sendCancelled(st) })
	}
}

func opFor(id messages.OpID) messages.Op { return messages.Op{ID: id} }

// sendCancelled tells the server a request was given up, on transports
// where the response would come on a shared channel (stdio, sockets,
// legacy SSE). On Streamable HTTP aborting the exchange is the
// cancellation, and nothing is sent.
func (c *conn) sendCancelled(st *opState) {
	if c.kind == messages.TransportHTTP {
		return
	}
	params := jsonscan.AppendMarshalString([]byte(`{"requestId":`), st.reqID)
	params = append(params, `,"reason":"cancelled by the client"}`...)
	_ = c.tr.SendNotification(c.ctx, string(mcp.MethodNotificationCancelled), params)
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
		defer c.recoverConn("notification sender")
		f()
	})
}

// Notify sends a notification on its own goroutine. On 2026-07-28
// connections notifications/roots/list_changed does not exist (a server
// asks for the roots within each request that needs them) and is dropped.
func (c *conn) Notify(method string, params json.RawMessage) {
	if c.sess.modern && method == string(mcp.MethodNotificationRootsListChanged) {
		return
	}
	params, ok := notificationParams(params)
	if !ok {
		return
	}
	c.background(func() { _ = c.tr.SendNotification(c.ctx, method, params) })
}

// notificationParams checks a notification's params: none (empty or null)
// sends none; an object is sent as it is; anything else is not sent (ok
// false).
func notificationParams(params json.RawMessage) (json.RawMessage, bool) {
	t := bytes.TrimSpace(params)
	switch {
	case len(t) == 0 || string(t) == "null":
		return nil, true
	case t[0] == '{' && json.Valid(t):
		return t, true
	}
	return nil, false
}
