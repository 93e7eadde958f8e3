package transports

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/mcprt/mcprt/internal/jsonscan"
)

// lineConn speaks newline-delimited JSON-RPC over a reader and a writer: a
// stdio child's stdout and stdin, or a Unix socket. It is an rpcTransport,
// and it hands every server notification to rawNote as raw bytes, so
// notifications are decoded once, typed, by whoever consumes them.
//
// Goroutines: one reader, started by Start and ended by EOF, a read error,
// a protocol violation or Close. Server-to-client requests are handed to
// onServerRequest, which answers them on goroutines of the connection.
// Frame writes are serialised by wmu.
type lineConn struct {
	r io.Reader
	w io.WriteCloser
	// rawNote receives every notification's method and params; it must not
	// block for long (the reader waits for it).
	rawNote func(method string, params json.RawMessage)
	// onEnd is called once, from the reader goroutine, when reading stops;
	// err is nil after Close.
	onEnd func(err error)
	// onServerRequest receives every server-to-client request with its
	// raw id (the connection answers it: serverreq.go); set before Start,
	// and it must not block.
	onServerRequest func(id json.RawMessage, method string, params json.RawMessage)
	// onWriteFail, when set, hears of every failed write (the peer stopped
	// reading, or Close closed the writer); set before Start.
	onWriteFail func(err error)
	// onUnmatched, when set, hears of every response whose id matched no
	// pending request (raw id); set before Start.
	onUnmatched func(rawID []byte)

	wmu sync.Mutex // serialises frame writes

	mu sync.Mutex
	// The fields below are guarded by mu.
	pending map[string]completion // requests awaiting their response, by id
	closed  bool
	started bool

	done      chan struct{} // closed when reading has stopped
	endErr    error         // why reading stopped; written before done closes
	peerEnded bool          // reading stopped before Close; written before done closes
	workers   sync.WaitGroup
}

var _ rpcTransport = (*lineConn)(nil)

func newLineConn(r io.Reader, w io.WriteCloser, rawNote func(string, json.RawMessage), onEnd func(error)) *lineConn {
	return &lineConn{
		r:       r,
		w:       w,
		rawNote: rawNote,
		onEnd:   onEnd,
		pending: make(map[string]completion),
		done:    make(chan struct{}),
	}
}

// Start begins reading (the context is the interface's; the reader ends
// with Close or the peer).
func (c *lineConn) Start(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return nil
	}
	if c.closed {
		return ErrClosed
	}
	c.started = true
	c.workers.Add(1)
	go c.readLoop()
	return nil
}

func (c *lineConn) readLoop() {
	defer c.workers.Done()
	err := c.readAll()
	c.mu.Lock()
	byClose := c.closed
	if byClose {
		err = nil
	}
	c.closed = true
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	c.endErr, c.peerEnded = err, !byClose
	close(c.done)
	for _, done := range sortedCompletions(pending) {
		done(nil, c.closedErr())
	}
	if c.onEnd != nil {
		c.onEnd(err)
	}
}

// readAll reads every line; a panic while handling one ends reading with
// a *panicError.
func (c *lineConn) readAll() (err error) {
	defer func() {
		if p := recovered("line reader", recover()); p != nil {
			err = p
		}
	}()
	return readLines(c.r, MaxFrame, c.handleLine)
}

// readLines calls handle for every non-blank line of r, refusing lines over
// limit. It returns nil at EOF, or the error that stopped it.
func readLines(r io.Reader, limit int, handle func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > limit+1 { // +1 for the newline itself
			return ErrFrameTooLarge
		}
		if err == bufio.ErrBufferFull {
			line = append(line, chunk...)
			continue
		}
		full := chunk
		if len(line) > 0 {
			line = append(line, chunk...)
			full = line
		}
		if trimmed := bytes.TrimSpace(full); len(trimmed) > 0 {
			herr := handle(trimmed)
			if herr != nil && err == io.EOF && !bytes.HasSuffix(full, []byte("\n")) {
				// The output ended inside a line: the server died while
				// writing it (say, killed by a signal), which is how it
				// ended, not a protocol violation.
				return errCutShort
			}
			if herr != nil {
				return herr
			}
		}
		line = line[:0]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (c *lineConn) handleLine(line []byte) error {
	if line[0] != '{' {
		return ErrNotJSON
	}
	f, err := decodeFrame(line)
	if err != nil {
		return ErrNotJSON
	}
	hasID := len(f.ID) > 0 && string(f.ID) != "null"
	switch {
	case f.Method != "" && !hasID:
		if c.rawNote != nil {
			c.rawNote(f.Method, f.Params)
		}
	case f.Method != "":
		if c.onServerRequest != nil {
			c.onServerRequest(f.ID, f.Method, f.Params)
		}
	default:
		if !hasID {
			return nil // a response without a usable id answers nothing we sent
		}
		key, isString := jsonscan.String(f.ID)
		if !isString && !isNumber(f.ID) {
			return nil
		}
		var done completion
		if isString {
			c.mu.Lock()
			done = c.pending[key]
			delete(c.pending, key)
			c.mu.Unlock()
		}
		if done != nil {
			done(&rpcResponse{ID: f.ID, Result: f.Result, Error: rpcErrorOf(f.Error)}, nil)
		} else if c.onUnmatched != nil {
			c.onUnmatched(f.ID)
		}
	}
	return nil
}

func (c *lineConn) writeFrame(b []byte) error {
	if len(b) > MaxFrame {
		return ErrFrameTooLarge
	}
	return c.writeLocked(append(b, '\n'), true)
}

// completion receives a request's outcome: its response, or the error that
// ended it. Whoever removes a request from pending calls its completion,
// so it runs exactly once.
type completion func(*rpcResponse, error)

// SendRequest writes the request and waits for its response, the context's
// end, or the connection's end.
func (c *lineConn) SendRequest(ctx context.Context, req rpcRequest) (*rpcResponse, error) {
	type outcome struct {
		resp *rpcResponse
		err  error
	}
	ch := make(chan outcome, 1)
	key := req.ID
	if err := c.startRequest(req, func(r *rpcResponse, err error) { ch <- outcome{r, err} }); err != nil {
		return nil, err
	}
	select {
	case o := <-ch:
		return o.resp, o.err
	case <-ctx.Done():
		if c.abandon(key) {
			return nil, ctx.Err()
		}
		o := <-ch // completed while we were giving up
		return o.resp, o.err
	}
}

// startRequest registers done for req's response and writes req, without
// waiting for the response: done runs later, on the reader goroutine with
// the response, or with the reason the connection ended. It returns an
// error (and done never runs) when the request could not be written.
func (c *lineConn) startRequest(req rpcRequest, done completion) error {
	b, err := appendRequest(nil, req)
	if err != nil {
		return fmt.Errorf("transports: marshal request: %w", err)
	}
	key := req.ID
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.closedErr()
	}
	c.pending[key] = done
	c.mu.Unlock()
	if err := c.writeFrame(b); err != nil {
		if !c.abandon(key) {
			return nil // the connection ended meanwhile and done has run
		}
		if errors.Is(err, ErrClosed) {
			return c.closedErr()
		}
		return err
	}
	return nil
}

// abandon forgets a pending request and reports whether it was still
// pending (then its completion will never run).
func (c *lineConn) abandon(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[key]
	delete(c.pending, key)
	return ok
}

// abandonAll forgets every pending request and returns their completions,
// in id order, for the caller to run.
func (c *lineConn) abandonAll() []completion {
	c.mu.Lock()
	pending := c.pending
	c.pending = map[string]completion{}
	c.mu.Unlock()
	return sortedCompletions(pending)
}

// sortedCompletions orders completions by request id, so that a
// connection's end fails its requests in a reproducible order.
func sortedCompletions(m map[string]completion) []completion {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]completion, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// closedErr says why requests can no longer be answered.
func (c *lineConn) closedErr() error {
	select {
	case <-c.done:
		if c.endErr != nil {
			return fmt.Errorf("%w: %w", ErrClosed, c.endErr)
		}
	default:
	}
	return ErrClosed
}

// SendNotification writes a notification.
func (c *lineConn) SendNotification(_ context.Context, method string, params json.RawMessage) error {
	b, err := appendNotification(nil, method, params)
	if err != nil {
		return fmt.Errorf("transports: marshal notification: %w", err)
	}
	return c.writeFrame(b)
}

// Close closes the writer (the child's stdin, or the socket). Reading stops
// when the peer closes its side; the owner closes the reader or kills the
// process if it does not. It does not wait for wmu: a write blocked on a
// peer that stopped reading must not block Close, and closing the writer
// is what ends that write.
func (c *lineConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.w.Close()
}

// isDone reports whether reading has stopped.
func (c *lineConn) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// endedByPeer reports whether reading stopped without Close: the peer
// closed its side, a read failed or the peer broke the protocol (endErr
// says which; nil is end of file).
func (c *lineConn) endedByPeer() bool { return c.isDone() && c.peerEnded }

// Wait blocks until the reader and every request handler have returned.
func (c *lineConn) Wait() { c.workers.Wait() }

// SessionID returns "": stdio and sockets have no session id.
func (c *lineConn) SessionID() string { return "" }

// isNumber reports whether a raw JSON value is a number.
func isNumber(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
}
