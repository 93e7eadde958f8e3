package transports

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// An SSE body, after the tap (ssetap.go) has bounded its events and taken
// out what the router and the server-request handler claim, is read here
// event by event: the field names and the dispatch rules are the HTML
// event-stream format's, for the fields MCP uses (event, data, id, retry).

var (
	// errNoAnswerID: a JSON answer without an id (and not an error).
	errNoAnswerID = errors.New("transports: the answer carries no JSON-RPC id")
	// errBadAnswer: a JSON answer that is not a JSON object.
	errBadAnswer = errors.New("transports: the answer is not a JSON-RPC message")
	// errNoEndpoint: a legacy SSE request before the endpoint event.
	errNoEndpoint = errors.New("transports: no message endpoint announced yet")
)

// sseCursor is what resuming a stream needs: the id of the last event
// dispatched and the reconnection time the server asked for.
type sseCursor struct {
	lastID   string
	retry    time.Duration
	hasRetry bool
}

// delay is the wait before reopening: the server's retry (at least
// minRetry), defaultRetry when it gave none.
func (c *sseCursor) delay() time.Duration {
	if !c.hasRetry {
		return defaultRetry
	}
	return max(c.retry, minRetry)
}

// sseReader reads events from one SSE body.
type sseReader struct {
	br   *bufio.Reader
	cur  *sseCursor // nil: ids and retry fields are not kept
	data []byte     // the current event's data; reused between events
	name []byte     // the current event's name
	// id is the current event's id field; it counts once the event is
	// dispatched.
	id    string
	hasID bool
	// cut is set when next returned the unfinished last event of a body
	// that ended without the blank line that dispatches it.
	cut bool
}

var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 8<<10) }}

func newSSEReader(body io.Reader, cur *sseCursor) *sseReader {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(body)
	return &sseReader{br: br, cur: cur}
}

// release gives the buffer back; the reader is not used again.
func (r *sseReader) release() {
	r.br.Reset(nil)
	readerPool.Put(r.br)
	r.br = nil
}

// next returns the next event that has data: its name ("message" when it
// has none) and its data, valid until the following call. At the end of
// the body it returns an unfinished last event first (its id is not
// counted), then the reading error: io.EOF when the server ended the body.
func (r *sseReader) next() (name string, data []byte, err error) {
	var long []byte // a line longer than the buffer
	for {
		line, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if err != nil {
			if len(line) > 0 {
				r.field(line) // a last line without its newline
			}
			if len(r.data) > 0 {
				name, data = r.event()
				r.data, r.cut = r.data[:0], true // returned once; the error comes next
				return name, data, nil
			}
			return "", nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 {
			r.field(line)
			continue
		}
		// A blank line dispatches the event.
		if r.hasID && r.cur != nil {
			r.cur.lastID = r.id
		}
		r.hasID = false
		if len(r.data) > 0 {
			name, data = r.event()
			r.data, r.name = r.data[:0], r.name[:0]
			return name, data, nil
		}
		r.name = r.name[:0]
	}
}

func (r *sseReader) event() (string, []byte) {
	switch string(r.name) {
	case "", "message":
		return "message", r.data
	case "endpoint":
		return "endpoint", r.data
	}
	return string(r.name), r.data
}

// field records one line of an event.
func (r *sseReader) field(line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	switch {
	case bytes.HasPrefix(line, dataField):
		if len(r.data) > 0 {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, bytes.TrimPrefix(line[len(dataField):], []byte(" "))...)
	case bytes.HasPrefix(line, []byte("event:")):
		r.name = append(r.name[:0], bytes.TrimSpace(line[len("event:"):])...)
	case bytes.HasPrefix(line, []byte("id:")):
		// An id holding NUL is ignored (the SSE rule).
		if v := bytes.TrimPrefix(line[len("id:"):], []byte(" ")); bytes.IndexByte(v, 0) < 0 {
			r.id, r.hasID = string(v), true
		}
	case bytes.HasPrefix(line, []byte("retry:")) && r.cur != nil:
		v := bytes.TrimPrefix(line[len("retry:"):], []byte(" "))
		if ms, err := strconv.ParseUint(string(v), 10, 31); err == nil {
			r.cur.retry, r.cur.hasRetry = time.Duration(ms)*time.Millisecond, true
		}
	}
}

// readStream reads a POST's SSE stream until the answer: notifications on
// the way go to notify (server requests were taken by the tap; responses
// of other ids were dropped there). A stream the server ends before the
// answer, after an event id, is resumed (before 2026-07-28).
func (s *streamable) readStream(ctx context.Context, body io.Reader) (*rpcResponse, error) {
	var cur sseCursor
	r, err := s.readEvents(body, &cur)
	for r == nil && errors.Is(err, io.EOF) && ctx.Err() == nil && cur.lastID != "" && !s.modern.Load() {
		r, err = s.resume(ctx, &cur)
	}
	switch {
	case r != nil:
		return r, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, errResume):
		return nil, err
	}
	return nil, fmt.Errorf("%w: %w", errStreamBroke, err)
}

// errResume marks a response stream that could not be resumed.
var errResume = errors.New("transports: resuming the response stream failed")

// readEvents reads one body until the answer or its end.
func (s *streamable) readEvents(body io.Reader, cur *sseCursor) (*rpcResponse, error) {
	rd := newSSEReader(body, cur)
	defer rd.release()
	for {
		_, data, err := rd.next()
		if err != nil {
			return nil, err
		}
		f, ferr := decodeFrame(data)
		if ferr != nil {
			continue // not JSON-RPC: skipped, as before
		}
		hasID := len(f.ID) > 0 && string(f.ID) != "null"
		switch {
		case f.Method != "" && !hasID:
			s.notify(f.Method, f.Params)
		case f.Method != "":
			// A server request the tap did not take: nobody answers it.
		case hasID || f.Error != nil:
			return &rpcResponse{ID: f.ID, Result: f.Result, Error: rpcErrorOf(f.Error)}, nil
		}
	}
}

// resume waits the retry time the server gave, then reopens the stream
// with a GET carrying Last-Event-ID and reads it.
func (s *streamable) resume(ctx context.Context, cur *sseCursor) (*rpcResponse, error) {
	if !waitOn(ctx, s.clock, cur.delay()) {
		return nil, ctx.Err()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, session, err := s.newRequest(ctx, http.MethodGet, nil, valueSSE, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Last-Event-ID", cur.lastID)
	resp, err := s.do(req, session, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errResume, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %w", errResume, &httpStatusError{what: "resumed stream", status: resp.StatusCode})
	}
	if media := mediaType(resp.Header.Get("Content-Type")); media != "text/event-stream" {
		return nil, fmt.Errorf("%w: answered with content type %q", errResume, media)
	}
	return s.readEvents(resp.Body, cur)
}

// waitOn waits d on the clock; false when ctx ended first.
func waitOn(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	fired := make(chan struct{})
	t := clock.Or(clk).AfterFunc(d, func() { close(fired) })
	select {
	case <-fired:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}
