package transports

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/mcprt/mcprt/messages"
)

// A panic on any goroutine this package starts (dial, connection workers,
// readers, request handlers, shutdown) or in a callback net/http calls
// (the HTTP round trip, a body's Read) or the SSE clients call (the stream's
// loss and notification handlers) is recovered where it happens: the stack goes to
// the Dialer's logger at debug level, and only the connection or request
// the goroutine served ends, with a KindInternal error naming the server.
// The host process never sees the panic, and a stdio child is still
// terminated and reaped by the connection's shutdown.

// panicError is a recovered panic, carried as an error to where it can be
// reported (a lineConn's reader knows no server; its connection does).
type panicError struct {
	where string // what the goroutine was doing: "stdio reader", "dial", ...
	value any
	stack []byte
	// logged makes the stack reach the log once, however many requests
	// and reports the panic ends.
	logged atomic.Bool
}

func (p *panicError) Error() string {
	return fmt.Sprintf("transports: recovered panic in the %s", p.where)
}

// recovered wraps a value returned by recover() (nil: no panic).
func recovered(where string, v any) *panicError {
	if v == nil {
		return nil
	}
	return &panicError{where: where, value: v, stack: debug.Stack()}
}

// internalError is the error callers see for a recovered panic; the stack
// is logged once, here, at debug level.
func (d *Dialer) internalError(server string, p *panicError) *messages.Error {
	if p.logged.CompareAndSwap(false, true) {
		d.logger().Debug("recovered panic", "server", server, "in", p.where,
			"panic", fmt.Sprint(p.value), "stack", string(p.stack))
	}
	return messages.Errorf(messages.KindInternal, server,
		"internal error in the runtime's %s (a bug: the connection was closed; the stack is in the debug log)", p.where)
}

// asPanic finds a recovered panic in err.
func asPanic(err error) (*panicError, bool) {
	var p *panicError
	ok := errors.As(err, &p)
	return p, ok
}

// spawn runs f on a counted goroutine of the connection; a panic in f ends
// the connection with an internal error.
func (c *conn) spawn(where string, f func()) {
	c.d.spawn(func() {
		defer c.recoverConn(where)
		f()
	})
}

// recoverConn, deferred, turns a panic into the connection's end.
func (c *conn) recoverConn(where string) {
	if p := recovered(where, recover()); p != nil {
		c.lost(p)
	}
}

// recoverOp, deferred by a goroutine that serves one request, completes
// that request with an internal error (unless it is complete already) and
// ends the connection.
func (c *conn) recoverOp(op messages.Op, st *opState, where string) {
	p := recovered(where, recover())
	if p == nil {
		return
	}
	e := c.d.internalError(c.server, p)
	c.complete(op, st, messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, Err: e})
	c.lost(e)
}
