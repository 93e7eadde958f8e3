package transports

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// subscriptions/listen (2026-07-28). The revision has no standalone GET
// stream, and a server sends a change notification (tools, prompts or
// resources list_changed) only on a listen request that asked for it. So
// on a 2026-07-28 connection, on every transport, a listen request asking
// for the list changes the server's capabilities offer is opened right
// after the handshake: the server first acknowledges it
// (notifications/subscriptions/acknowledged, stamped with the request's id
// in _meta) and then stamps each change notification with that id. The
// connection's router takes them by that id and hands them to normal
// handling, so the actors see the same notifications as from a 2025-11-25
// server. The request has no answer while it lives; an answer (the
// server's graceful close) or a cut stream reopens it after
// listenRetry, a JSON-RPC error (a server without listen) ends it, and
// maxGETFailures failed attempts in a row end it too.
const (
	listenAck = "notifications/subscriptions/acknowledged"
	// listenRetry is the wait before a listen request is opened again.
	listenRetry = time.Second
)

// listChangeMethods are the change notifications a listen request asks for.
var listChangeMethods = []string{
	"notifications/tools/list_changed",
	"notifications/prompts/list_changed",
	"notifications/resources/list_changed",
}

// listenFilter is the listen request's notifications filter from the
// server's capabilities: each list whose listChanged the server offers;
// nil when it offers none (no listen request is sent).
func listenFilter(capabilities json.RawMessage) map[string]bool {
	var caps map[string]struct {
		ListChanged bool `json:"listChanged"`
	}
	if json.Unmarshal(capabilities, &caps) != nil {
		return nil
	}
	f := map[string]bool{}
	for list, key := range map[string]string{"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"} {
		if caps[list].ListChanged {
			f[key] = true
		}
	}
	if len(f) == 0 {
		return nil
	}
	return f
}

// startListen opens the listen request of a 2026-07-28 connection and
// returns once the server acknowledged or refused it (or the dial's
// context ended), so that it is in place before the first request that
// could change a list; it is kept open in the background until the
// connection ends.
func (c *conn) startListen(ctx context.Context, capabilities json.RawMessage) {
	filter := listenFilter(capabilities)
	if filter == nil {
		return
	}
	params, _ := json.Marshal(map[string]any{"notifications": filter})
	answered := make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(answered) }) }
	if !c.spawnOp(func() { defer signal(); c.listen(params, signal) }) {
		return
	}
	select {
	case <-answered:
	case <-ctx.Done():
	}
}

// listen sends listen requests until the connection ends, the server
// refuses one, or maxGETFailures in a row failed before an acknowledgement.
func (c *conn) listen(params json.RawMessage, acked func()) {
	defer c.recoverConn("subscriptions/listen")
	failures := 0
	for c.ctx.Err() == nil {
		ok, refused := c.listenOnce(params, acked)
		if refused {
			acked()
			return
		}
		if ok {
			failures = 0
		} else {
			failures++
		}
		if failures >= maxGETFailures || !c.waitRetry(listenRetry) {
			return
		}
	}
}

// listenOnce sends one listen request and reads its notifications until it
// ends; ok says it was acknowledged, refused that the server answered
// with an error.
func (c *conn) listenOnce(params json.RawMessage, acked func()) (ok, refused bool) {
	id := c.ids.next()
	var mu sync.Mutex
	methods := map[string]bool{listenAck: true}
	for _, m := range listChangeMethods {
		methods[m] = true
	}
	key := id
	c.router.register(key, &route{
		methods: methods,
		deliver: func(method string, params json.RawMessage) {
			if method == listenAck {
				mu.Lock()
				ok = true
				mu.Unlock()
				acked()
				return
			}
			c.deliverNote(method, params)
		},
	})
	defer c.router.unregister(key)
	p, header, err := c.sess.prepare("subscriptions/listen", params)
	if err != nil {
		return false, true
	}
	resp, err := c.tr.SendRequest(c.ctx, rpcRequest{ID: id, Method: "subscriptions/listen", Params: p, Header: header})
	mu.Lock()
	defer mu.Unlock()
	if err == nil && resp != nil && resp.Error != nil {
		c.d.logger().Debug("the server refused subscriptions/listen", "server", c.server, "code", resp.Error.Code)
		return ok, true
	}
	return ok, false
}

// waitRetry waits d on the injected clock; false when the connection ended
// first.
func (c *conn) waitRetry(d time.Duration) bool { return waitOn(c.ctx, c.d.clock(), d) }
