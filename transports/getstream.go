package transports

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"time"
)

// The standalone GET stream of Streamable HTTP (2025-11-25): opened right
// after the handshake, it carries what a server pushes outside a response
// (list_changed, log messages, events, and its own requests). A 400, 404 or
// 405 means the server offers none: that is remembered and never taken for
// a lost session. A stream that ends is reopened after the server's retry
// field (defaultRetry when it gave none), resuming with Last-Event-ID.
// Requests and notifications on it go through the same sseTap as response
// streams, so they reach the same routing.
const (
	defaultRetry = time.Second
	minRetry     = 10 * time.Millisecond
	maxRetry     = 60 * time.Second
	// maxGETFailures ends the reopening after this many failed attempts in
	// a row (a server that keeps answering 5xx); a stream that opened
	// resets the count.
	maxGETFailures = 5
)

// getStream is one connection's standalone GET stream.
type getStream struct {
	c   *conn
	url string
	cur sseCursor // the last event id and the server's retry
}

// startGETStream opens the stream and returns once the server has answered
// the first GET (or refused it, or the dial's context ended), so that the
// stream is in place before the first request that could make the server
// push; reading and reopening go on in the background until the connection
// ends.
func (c *conn) startGETStream(ctx context.Context) {
	g := &getStream{c: c, url: c.endpoint.URL}
	answered := make(chan struct{})
	if !c.spawnOp(func() { g.run(answered) }) {
		return
	}
	select {
	case <-answered:
	case <-ctx.Done():
	}
}

// run opens, reads and reopens the stream until the connection ends, the
// server offers none, or it failed maxGETFailures times in a row.
func (g *getStream) run(answered chan struct{}) {
	first := true
	signal := func() {
		if first {
			first = false
			close(answered)
		}
	}
	defer signal()
	failures := 0
	for g.c.ctx.Err() == nil {
		resp, err := g.open()
		signal()
		switch {
		case err != nil:
			failures++
		case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
			resp.Body.Close()
			g.c.d.logger().Debug("the server offers no GET stream", "server", g.c.server, "status", resp.StatusCode)
			return
		case resp.StatusCode != http.StatusOK || !isEventStream(resp):
			resp.Body.Close()
			failures++
		default:
			failures = 0
			g.read(resp.Body)
			resp.Body.Close()
		}
		if failures >= maxGETFailures || !g.wait() {
			return
		}
	}
}

// open sends one GET.
func (g *getStream) open() (*http.Response, error) {
	req, err := http.NewRequestWithContext(g.c.ctx, http.MethodGet, g.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	g.c.httpHeaders(req.Header)
	if g.cur.lastID != "" {
		req.Header.Set("Last-Event-ID", g.cur.lastID)
	}
	return g.c.client.Do(req)
}

// read reads the stream's events until it ends: the tap has already taken
// the requests and the streams' notifications out; what is left are
// notifications for normal handling and event ids and retry fields. An
// event the body ended in the middle of is not dispatched.
func (g *getStream) read(body io.Reader) {
	r := newSSEReader(body, &g.cur)
	defer r.release()
	for {
		_, data, err := r.next()
		if err != nil || r.cut {
			return
		}
		g.dispatch(data)
	}
}

// dispatch hands one event's notification to normal handling; anything
// else (an empty priming event, a response) is dropped.
func (g *getStream) dispatch(data []byte) {
	if len(data) == 0 {
		return
	}
	f, err := decodeFrame(data)
	if err != nil || f.Method == "" || (len(f.ID) > 0 && string(f.ID) != "null") {
		return
	}
	g.c.onNotification(f.Method, f.Params)
}

// wait waits the retry time on the injected clock; false when the
// connection ended first.
func (g *getStream) wait() bool { return g.c.waitRetry(min(g.cur.delay(), maxRetry)) }

func isEventStream(resp *http.Response) bool {
	return strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream")
}

// httpHeaders sets what every request of the connection carries besides
// its own: the configured headers, the session id and the protocol
// version.
func (c *conn) httpHeaders(h http.Header) {
	for k, v := range c.endpoint.Headers {
		h.Set(k, v)
	}
	if c.sess.version != "" {
		h.Set(headerProtocolVersion, c.sess.version)
	}
	if !c.sess.modern {
		if id := c.tr.SessionID(); id != "" {
			h.Set(headerSessionID, id)
		}
	}
}

// postAnswer sends a response to a server request by POST: to the
// endpoint on Streamable HTTP, to the announced endpoint on legacy SSE.
func (c *conn) postAnswer(ctx context.Context, frame []byte) error {
	target := c.endpoint.URL
	if sse, ok := c.tr.(*legacySSE); ok {
		u, err := sse.answerURL()
		if err != nil {
			return err
		}
		target = u
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(frame))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c.httpHeaders(req.Header)
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.Body.Close()
}
