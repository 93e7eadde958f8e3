package transports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/mcprt/mcprt/messages"
)

// release stops the transport and everything under it and waits for its
// goroutines: the child process (and its group) is terminated and reaped,
// the socket closed, the HTTP session ended.
func (c *conn) release() {
	if !c.released.CompareAndSwap(false, true) {
		return
	}
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.cancel()
	if c.lc != nil {
		// Requests in flight end now, as closed, not with whatever the
		// server answers to the end of its input.
		for _, done := range c.lc.abandonAll() {
			done(nil, ErrClosed)
		}
	}
	if c.tr != nil {
		_ = c.tr.Close()
	}
	if c.sock != nil {
		_ = c.sock.Close()
	}
	if c.proc != nil {
		c.proc.terminate(c.d.clock())
	}
	if c.lc != nil {
		c.lc.Wait()
	}
	c.closeIdle()
}

// closeIdle closes the idle keep-alive connections of an HTTP connection's
// client, so that none outlives it with its reader and writer goroutines.
func (c *conn) closeIdle() {
	if c.http != nil {
		if t, ok := c.http.base.(interface{ CloseIdleConnections() }); ok {
			t.CloseIdleConnections()
		}
	}
}

// Notification delivery states (conn.noteState).
const (
	notesEarly  = iota // the DialResult is not delivered yet: hold them
	notesOpen          // deliver them
	notesClosed        // ConnClosed is delivered: drop them
)

// maxEarly bounds the notifications held back during a handshake.
const maxEarly = 256

// onNotification forwards a server notification to the sink, holding it
// back until the DialResult has been delivered.
func (c *conn) onNotification(method string, params json.RawMessage) {
	if method == "notifications/cancelled" && c.sreq.cancelled(params) {
		return // the server withdrew a request of its own
	}
	if c.router.claim(method, params) {
		return // a stream's frame (or a late one): not for normal handling
	}
	c.deliverNote(method, params)
}

// deliverNote is onNotification's normal handling, after routing.
func (c *conn) deliverNote(method string, params json.RawMessage) {
	n := messages.ConnNotification{Server: c.server, Gen: c.gen, Method: method, Params: params}
	c.noteMu.Lock()
	defer c.noteMu.Unlock()
	switch {
	case c.noteState == notesOpen:
		c.sink(n)
	case c.noteState == notesEarly && len(c.early) < maxEarly:
		c.early = append(c.early, n)
	}
}

// onReadEnd is called by the line reader when it stops.
func (c *conn) onReadEnd(err error) {
	if err == nil {
		c.mu.Lock()
		closing := c.closing
		c.mu.Unlock()
		if closing {
			return
		}
		err = errEOF
	}
	c.lost(err)
}

// onSSELost is called by the legacy SSE client when its stream ends.
func (c *conn) onSSELost(err error) {
	defer c.recoverConn("SSE stream handler")
	if c.http != nil && c.http.violation.Load() {
		err = ErrFrameTooLarge
	}
	c.lost(fmt.Errorf("%w: %w", errStreamLost, err))
}

var (
	errEOF        = errors.New("transports: server closed the connection")
	errStreamLost = errors.New("transports: SSE stream lost")
	// errStoppedReading: a write to a stdio or socket server failed.
	errStoppedReading = errors.New("transports: server stopped reading")
	// errStreamBroke: an HTTP response stream broke off before its result.
	errStreamBroke = errors.New("transports: response stream broke")
	// errCutShort: the output ended inside an unfinished message.
	errCutShort = errors.New("transports: output ended inside a message")
)

// endError says why the transport ended by itself.
func (c *conn) endError() *messages.Error {
	c.mu.Lock()
	cause := c.endErr
	c.mu.Unlock()
	return c.describeEnd(cause, "")
}

// describeEnd explains an end of the transport the runtime did not ask for;
// cause nil means end of file. during qualifies an exit ("during the
// handshake").
func (c *conn) describeEnd(cause error, during string) *messages.Error {
	var e *messages.Error
	p, panicked := asPanic(cause)
	switch {
	case panicked:
		e = c.d.internalError(c.server, p)
	case errors.Is(cause, errStoppedReading):
		e = messages.Errorf(messages.KindDisconnected, c.server, "%s%s", c.stoppedReadingText(), during)
	case cause == nil || errors.Is(cause, errEOF):
		e = messages.Errorf(messages.KindDisconnected, c.server, "%s%s", c.exitText(), during)
	case errors.Is(cause, errCutShort):
		e = messages.Errorf(messages.KindDisconnected, c.server, "%s%s, in the middle of a message", c.exitText(), during)
	case errors.Is(cause, errStreamLost) && !errors.Is(cause, ErrFrameTooLarge) && !errors.Is(cause, errBudget):
		e = messages.Errorf(messages.KindDisconnected, c.server, "the server's SSE stream ended")
	default:
		e = c.classify(messages.KindDisconnected, cause)
	}
	return c.withStderr(e)
}

// lineEndError explains a request that failed because the server ended its
// stdio or socket connection. A child gets up to the stdin grace period to
// exit, so that the error can tell its exit status.
func (c *conn) lineEndError() *messages.Error {
	if c.proc != nil {
		waitClosed(c.d.clock(), c.proc.exited, stdinGrace)
	}
	return c.describeEnd(c.lc.endErr, "")
}

// stoppedReadingText says why writing to a stdio or socket server failed:
// the exit of a child that ended by itself, else that it stopped reading.
func (c *conn) stoppedReadingText() string {
	switch {
	case c.proc != nil && c.proc.exitedByItself():
		return c.proc.exitDescription()
	case c.proc != nil:
		return "server stopped reading its stdin"
	}
	return "server stopped reading the socket"
}

func (c *conn) exitText() string {
	switch {
	case c.proc != nil:
		return c.proc.exitDescription()
	case c.sock != nil:
		return "server closed the socket"
	}
	return "server closed the connection"
}

// handshakeError explains a failed handshake; release has run, so a child's
// exit status is known. A server that answered is init_failed; one that
// could not be reached at all is connect_failed; one that broke the
// protocol is protocol_error.
func (c *conn) handshakeError(err error) *messages.Error {
	if c.lc != nil && errors.Is(err, ErrClosed) {
		// The stream ended under the handshake: say how.
		var cause error
		c.mu.Lock()
		if c.ended {
			cause = c.endErr // a failed write, or a recovered panic
		}
		c.mu.Unlock()
		if c.lc.endedByPeer() && !errors.Is(cause, errStoppedReading) {
			cause = c.lc.endErr
		}
		e := c.describeEnd(cause, " during the handshake")
		if e.Kind == messages.KindDisconnected {
			e.Kind = messages.KindInitFailed
		}
		return e
	}
	if p, ok := asPanic(err); ok {
		return c.d.internalError(c.server, p)
	}
	e := c.classify(messages.KindInitFailed, err)
	switch {
	case unreachable(err):
		e.Kind = messages.KindConnectFailed
	case e.Kind == messages.KindDisconnected:
		e.Kind = messages.KindInitFailed
	}
	return c.withStderr(e)
}

// unreachable reports whether err says the server could not be reached at
// all (nothing listening, no route, no such host).
func unreachable(err error) bool {
	var dnsErr *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.As(err, &dnsErr)
}

// withStderr attaches the end of a stdio server's stderr to a failure, for
// the person and the host only (messages.Error.ServerStderr): never to its
// message, which the model may read. It is attached with or without debug.
func (c *conn) withStderr(e *messages.Error) *messages.Error {
	if c.proc == nil || e == nil {
		return e
	}
	lines := c.stderrLines()
	if len(lines) == 0 {
		return e
	}
	cp := *e // e may be shared: a *messages.Error passes classify as it is
	cp.ServerStderr = lines
	return &cp
}

// Bounds of the stderr lines a failure carries.
const (
	stderrLines    = 10
	stderrLineMax  = 300
	stderrTailRead = 4 << 10
)

// stderrLines returns the last lines of the child's stderr, masked: a
// server may print its own configuration (argv, env) there, so every
// configured value and every environment value it was given is redacted.
func (c *conn) stderrLines() []string {
	tail := c.proc.stderr.Tail(stderrTailRead)
	if tail == "" {
		return nil
	}
	var out []string
	for _, l := range strings.Split(tail, "\n") {
		l = c.proc.mask(c.redact(l))
		if l == "" {
			continue
		}
		if len(l) > stderrLineMax {
			l = strings.ToValidUTF8(l[:stderrLineMax], "") + "…"
		}
		out = append(out, l)
	}
	if len(out) > stderrLines {
		out = out[len(out)-stderrLines:]
	}
	return out
}

// withStatus attaches the HTTP status of the failed exchange to err.
func (c *conn) withStatus(err error) error {
	if err == nil || c.http == nil {
		return err
	}
	if s := c.http.lastStatus.Load(); s >= 400 {
		return fmt.Errorf("%w: %w", &statusError{int(s)}, err)
	}
	return err
}

// statusSlot receives what the HTTP layer learns about one request's
// exchange: its status, that it went out (sent, called once the response
// begins), and whether its response stream ended cleanly (eof). It is the
// request's context as well (the parent's, with Value answering statusKey),
// so that the RoundTripper finds it without a context.WithValue per call.
type statusSlot struct {
	context.Context
	status atomic.Int32
	eof    atomic.Bool
	// tooLarge: the response stream carried an event over MaxFrame.
	tooLarge atomic.Bool
	// overBudget: reading the response would exceed the runtime's budget.
	overBudget atomic.Bool
	sent       func()
	// reqID is the request's JSON-RPC id: a response of another id on its
	// stream is dropped (conn.foreignResponse decides) and counted
	// (conn.unknownResponse).
	reqID string
	conn  *conn
	// caller is the request's caller tag (messages.Op.Caller).
	caller any
}

type statusKey struct{}

// Value answers statusKey with the slot itself, anything else from the
// parent context.
func (s *statusSlot) Value(key any) any {
	if _, ok := key.(statusKey); ok {
		return s
	}
	return s.Context.Value(key)
}

func marshalData(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
