package transports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

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
}

// onNotification forwards a server notification to the sink.
func (c *conn) onNotification(method string, params json.RawMessage) {
	c.sink(messages.ConnNotification{Server: c.server, Gen: c.gen, Method: method, Params: params})
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

// onSSELost is called by mcp-go's SSE transport when its stream breaks.
func (c *conn) onSSELost(err error) {
	if c.http != nil && c.http.violation.Load() {
		err = ErrFrameTooLarge
	}
	c.lost(fmt.Errorf("%w: %w", errStreamLost, err))
}

var (
	errEOF        = errors.New("transports: server closed the connection")
	errStreamLost = errors.New("transports: SSE stream lost")
)

// endError says why the transport ended by itself.
func (c *conn) endError() *messages.Error {
	c.mu.Lock()
	cause := c.endErr
	c.mu.Unlock()
	var e *messages.Error
	switch {
	case cause == nil || errors.Is(cause, errEOF):
		e = messages.Errorf(messages.KindDisconnected, c.server, "%s", c.exitText())
	case errors.Is(cause, errStreamLost) && !errors.Is(cause, ErrFrameTooLarge):
		e = messages.Errorf(messages.KindDisconnected, c.server, "the server's SSE stream ended")
	default:
		e = c.classify(messages.KindDisconnected, cause)
	}
	return c.withStderr(e)
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
// exit status is known.
func (c *conn) handshakeError(err error) *messages.Error {
	var e *messages.Error
	if c.lc != nil && c.lc.isDone() {
		e = c.endError()
		e.Kind = messages.KindInitFailed
		if e.Message != "" && c.proc != nil && c.lc.endErr == nil {
			e.Message += " during the handshake"
		}
		if errors.Is(c.lc.endErr, ErrNotJSON) || errors.Is(c.lc.endErr, ErrFrameTooLarge) {
			e.Kind = messages.KindProtocol
		}
		return e
	}
	e = c.classify(messages.KindInitFailed, err)
	if e.Kind == messages.KindDisconnected {
		e.Kind = messages.KindInitFailed
	}
	return c.withStderr(e)
}

// withStderr appends the end of a debug server's stderr to a failure.
func (c *conn) withStderr(e *messages.Error) *messages.Error {
	if c.proc == nil || !c.endpoint.Debug {
		return e
	}
	if tail := c.proc.stderr.Tail(300); tail != "" {
		e.Message += "; stderr: " + oneLineMessage(tail)
	}
	return e
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

// statusSlot receives the HTTP status of one request's exchange.
type statusSlot struct{ status atomic.Int32 }

type statusKey struct{}

func withSlot(ctx context.Context, s *statusSlot) context.Context {
	return context.WithValue(ctx, statusKey{}, s)
}

func marshalData(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
