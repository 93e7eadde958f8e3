package transports

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/mcprt/mcprt/messages"
)

// outcome turns a request's response or failure into its OpResult.
func (c *conn) outcome(op messages.Op, st *opState, resp *rpcResponse, err error, slot *statusSlot) messages.OpResult {
	res := messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID}
	c.mu.Lock()
	aborted, closing, ended, serverCancelled := st.aborted, c.closing, c.ended, st.serverCancelled
	c.mu.Unlock()
	if err == nil && resp == nil {
		err = errStreamBroke // no answer and no error: never taken as a result
	}
	switch {
	case serverCancelled && (err != nil || resp == nil):
		res.ServerCancelled = true
	case err == nil && resp.Error != nil && c.sessionLost(slot, resp.Error.Message):
		res.Err = messages.Errorf(messages.KindDisconnected, c.server, "the server lost the session (HTTP 400: no valid session ID); the next request starts a new one")
		c.lost(res.Err)
	case err == nil && slot != nil && !sameID(resp, st):
		// A single JSON answer for a request this one is not.
		c.unknownResponse()
		res.Err = messages.Errorf(messages.KindProtocol, c.server, "the server answered with a response to a request it was not sent")
	case err == nil && resp.Error != nil:
		res.Err = c.rpcError(resp.Error)
	case err == nil:
		res.Result = resp.Result
	case aborted:
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
		res.OnlyThis = slot != nil && slot.eof.Load() && slot.status.Load() < 400
	}
	return res
}

// opError classifies a failed request. On HTTP, a failure that means the
// server is gone (refused, session ended, stream broke) also ends the
// connection, so the next call reconnects instead of failing the same way.
func (c *conn) opError(err error, slot *statusSlot) *messages.Error {
	if p, ok := asPanic(err); ok {
		e := c.d.internalError(c.server, p)
		c.lost(e)
		return e
	}
	if (slot != nil && slot.overBudget.Load()) || errors.Is(err, errBudget) {
		return c.budgetError()
	}
	if slot != nil && slot.tooLarge.Load() {
		// One response stream carried an event over the limit: that
		// request fails; the connection (other streams) is fine.
		return messages.Errorf(messages.KindProtocol, c.server, "the server's response is a message over the 16 MiB limit")
	}
	if slot != nil && slot.eof.Load() && slot.status.Load() < 400 {
		// The server ended this response stream without a result: this
		// request failed, the connection is fine.
		return messages.Errorf(messages.KindDisconnected, c.server, "the server ended the response stream without a result")
	}
	if slot != nil { // nil on stdio and sockets
		if s := slot.status.Load(); s >= 400 {
			err = fmt.Errorf("%w: %w", &statusError{int(s)}, err)
		}
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

// sessionLost reports whether a Streamable HTTP POST's error answer means
// the server no longer knows the session the request carried: the
// TypeScript SDK answers such a POST with HTTP 400 and "No valid session
// ID" (the spec's 404 comes as errSessionLost instead).
// Only POSTs are judged: a GET stream refused with 400, 404 or 405 means
// the server offers no GET stream, never a lost session.
func (c *conn) sessionLost(slot *statusSlot, message string) bool {
	if slot == nil || c.kind != messages.TransportHTTP || slot.status.Load() != http.StatusBadRequest || c.tr.SessionID() == "" {
		return false
	}
	return strings.Contains(strings.ToLower(message), "no valid session id")
}

// sameID reports whether resp answers st's request. An error with a null
// id answers it too: JSON-RPC's answer to a request whose id the server
// could not read.
func sameID(resp *rpcResponse, st *opState) bool {
	if resp == nil {
		return false
	}
	return resp.idIs(st.reqID) || (resp.idNull() && resp.Error != nil)
}

// budgetError is the error of a call whose response would take the bytes
// in flight over the runtime's budget.
func (c *conn) budgetError() *messages.Error {
	return messages.Errorf(messages.KindResourceExhausted, c.server,
		"the response would take the runtime's response bytes in flight over its budget of %d MiB (Options.MaxResponseBytesInFlight); try again when fewer large responses are in flight",
		c.d.responseBudget().limit>>20)
}
