package transports

import (
	"errors"
	"fmt"
	"syscall"
)

// errNotWritten marks a request of which not a byte was written because
// the connection had already ended: it may go out on another connection.
var errNotWritten = errors.New("transports: request not written")

// rawFile is implemented by *os.File and *net.UnixConn: what the line codec
// writes to when it can try a write without blocking.
type rawFile interface {
	SyscallConn() (syscall.RawConn, error)
}

// startRequestNow registers done for req's response and writes req if that
// can be done at once, without blocking: on the calling goroutine, which
// may be an actor's. When the pipe or socket cannot take the whole frame
// now, it returns rest, which finishes the write and must run on a
// goroutine that may block; the frame lock is held until it does, so frames
// never interleave. Like startRequest, an error means done never runs.
func (c *lineConn) startRequestNow(req rpcRequest, done completion) (rest func() error, err error) {
	b, err := appendRequest(make([]byte, 0, 64+len(req.Method)+len(req.ID)+len(req.Params)), req)
	if err != nil {
		return nil, fmt.Errorf("transports: marshal request: %w", err)
	}
	if len(b) > MaxFrame {
		return nil, ErrFrameTooLarge
	}
	key := req.ID
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %w", errNotWritten, c.closedErr())
	}
	c.pending[key] = done
	c.mu.Unlock()
	b = append(b, '\n')
	raw, ok := c.w.(rawFile)
	if !ok || !c.wmu.TryLock() {
		// Another frame is being written (or the writer cannot be tried):
		// queue behind it on a goroutine that may wait.
		return func() error { return c.finishWrite(key, c.writeLocked(b, true)) }, nil
	}
	n, werr := tryWrite(raw, b)
	if werr != nil {
		c.failWrite(werr)
	}
	switch {
	case werr != nil && n == 0:
		c.wmu.Unlock()
		if err := c.finishWrite(key, fmt.Errorf("%w: write: %w", ErrClosed, werr)); err != nil {
			return nil, fmt.Errorf("%w: %w", errNotWritten, err)
		}
		return nil, nil
	case werr != nil:
		c.wmu.Unlock()
		return nil, c.finishWrite(key, fmt.Errorf("%w: write: %w", ErrClosed, werr))
	case n == len(b):
		c.wmu.Unlock()
		return nil, nil
	}
	left := b[n:]
	return func() error { return c.finishWrite(key, c.writeLocked(left, false)) }, nil
}

// writeLocked writes b, taking the frame lock first when lock is set, and
// releases the lock either way.
func (c *lineConn) writeLocked(b []byte, lock bool) error {
	if lock {
		c.wmu.Lock()
	}
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	if _, err := c.w.Write(b); err != nil {
		c.failWrite(err)
		return fmt.Errorf("%w: write: %w", ErrClosed, err)
	}
	return nil
}

// failWrite reports a failed write to onWriteFail.
func (c *lineConn) failWrite(err error) {
	if c.onWriteFail != nil {
		c.onWriteFail(err)
	}
}

// finishWrite settles a failed write of a registered request: if the
// request is still pending it is forgotten and the error returned (its
// completion will not run); if the connection's end already completed it,
// there is nothing to report.
func (c *lineConn) finishWrite(key string, err error) error {
	if err == nil || !c.abandon(key) {
		return nil
	}
	if errors.Is(err, ErrClosed) {
		return c.closedErr()
	}
	return err
}
