package transports

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
)

// legacySSE is our client of the legacy HTTP+SSE transport (2024-11-05):
// Start opens the GET stream and waits for its endpoint event, which names
// the URL every message is POSTed to; answers come on the GET stream,
// matched to their requests by id. An endpoint on another origin is refused
// by the tap before it gets here (redirect.go); one on another host is
// ignored here as well. The stream's end (or break) is reported to lost
// once, unless Close caused it.
//
// Concurrency: one reader goroutine per started transport, ended by Close
// (which waits for it) or the stream's end; SendRequest and
// SendNotification run on the callers' goroutines.
type legacySSE struct {
	base    *url.URL
	client  *http.Client
	headers map[string]string
	notify  func(method string, params json.RawMessage)
	lost    func(error)

	version  atomic.Pointer[string]
	endpoint atomic.Pointer[url.URL]
	ready    chan struct{} // closed at the first usable endpoint event
	once     sync.Once

	mu sync.Mutex
	// The fields below are guarded by mu.
	pending map[string]chan *rpcResponse // requests waiting for their answer, by id
	closed  bool
	cancel  context.CancelFunc // ends the GET stream
	done    chan struct{}      // closed when the reader has returned; nil before Start
}

var _ rpcTransport = (*legacySSE)(nil)

func newLegacySSE(raw string, client *http.Client, headers map[string]string, notify func(string, json.RawMessage), lost func(error)) (*legacySSE, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	return &legacySSE{base: u, client: client, headers: headers, notify: notify, lost: lost,
		ready: make(chan struct{}), pending: map[string]chan *rpcResponse{}}, nil
}

func (l *legacySSE) SessionID() string { return "" }

func (l *legacySSE) setProtocolVersion(v string) { l.version.Store(&v) }

// Start opens the GET stream and waits for the endpoint event, or ctx's end.
func (l *legacySSE) Start(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return errTransportClosed
	}
	sctx, cancel := context.WithCancel(ctx)
	l.cancel = cancel
	l.mu.Unlock()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, l.base.String(), nil)
	if err != nil {
		cancel()
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	for k, v := range l.headers {
		req.Header.Set(k, v)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		cancel()
		return fmt.Errorf("transports: opening the SSE stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		if resp.StatusCode == http.StatusUnauthorized {
			return errUnauthorized
		}
		return &httpStatusError{what: "SSE stream", status: resp.StatusCode}
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		resp.Body.Close()
		return errTransportClosed
	}
	l.done = make(chan struct{})
	l.mu.Unlock()
	go l.read(resp.Body)
	select {
	case <-l.ready:
		return nil
	case <-ctx.Done():
		cancel()
		return fmt.Errorf("transports: waiting for the SSE endpoint: %w", ctx.Err())
	}
}

// read reads the GET stream until it ends.
func (l *legacySSE) read(body io.ReadCloser) {
	defer close(l.done)
	defer body.Close()
	err := l.readAll(body)
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if !closed && l.lost != nil {
		l.lost(err)
	}
}

func (l *legacySSE) readAll(body io.Reader) (err error) {
	defer func() {
		if p := recovered("SSE stream reader", recover()); p != nil {
			err = p
		}
	}()
	rd := newSSEReader(body, nil)
	defer rd.release()
	for {
		name, data, err := rd.next()
		if err != nil {
			return err
		}
		switch name {
		case "endpoint":
			l.onEndpoint(string(data))
		case "message":
			l.onMessage(data)
		}
	}
}

func (l *legacySSE) onEndpoint(data string) {
	u, err := l.base.Parse(data)
	if err != nil || u.Host != l.base.Host {
		return // the tap refused another origin already; another host is ignored
	}
	l.endpoint.Store(u)
	l.once.Do(func() { close(l.ready) })
}

func (l *legacySSE) onMessage(data []byte) {
	f, err := decodeFrame(data)
	if err != nil {
		return
	}
	hasID := len(f.ID) > 0 && string(f.ID) != "null"
	switch {
	case f.Method != "" && !hasID:
		l.notify(f.Method, f.Params)
	case f.Method != "" || !hasID:
		// A server request the tap did not take, or a response to
		// nothing: dropped.
	default:
		id, ok := idString(f.ID)
		if !ok {
			return
		}
		l.mu.Lock()
		ch := l.pending[id]
		delete(l.pending, id)
		l.mu.Unlock()
		if ch != nil {
			ch <- &rpcResponse{ID: f.ID, Result: f.Result, Error: rpcErrorOf(f.Error)}
		}
	}
}

// post sends one message to the endpoint.
func (l *legacySSE) post(ctx context.Context, body []byte, extra http.Header) (*http.Response, error) {
	ep := l.endpoint.Load()
	if ep == nil {
		return nil, errNoEndpoint
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if v := l.version.Load(); v != nil && *v != "" {
		req.Header.Set(headerProtocolVersion, *v)
	}
	for k, v := range l.headers {
		req.Header.Set(k, v)
	}
	for k, v := range extra {
		if _, ok := req.Header[k]; !ok {
			req.Header[k] = v
		}
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("transports: HTTP POST: %w", err)
	}
	return resp, nil
}

// SendRequest POSTs req and waits for its answer on the GET stream.
func (l *legacySSE) SendRequest(ctx context.Context, req rpcRequest) (*rpcResponse, error) {
	body, err := appendRequest(make([]byte, 0, 80+len(req.ID)+len(req.Method)+len(req.Params)), req)
	if err != nil {
		return nil, err
	}
	ch := make(chan *rpcResponse, 1)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, errTransportClosed
	}
	l.pending[req.ID] = ch
	l.mu.Unlock()
	forget := func() {
		l.mu.Lock()
		delete(l.pending, req.ID)
		l.mu.Unlock()
	}
	resp, err := l.post(ctx, body, req.Header)
	if err != nil {
		forget()
		return nil, err
	}
	_, rerr := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case rerr != nil:
		forget()
		return nil, rerr
	case resp.StatusCode == http.StatusUnauthorized:
		forget()
		return nil, errUnauthorized
	case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted:
		forget()
		return nil, &httpStatusError{what: "request", status: resp.StatusCode}
	}
	select {
	case r := <-ch:
		if r == nil {
			return nil, ErrClosed
		}
		return r, nil
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

// SendNotification POSTs a notification.
func (l *legacySSE) SendNotification(ctx context.Context, method string, params json.RawMessage) error {
	body, err := appendNotification(nil, method, params)
	if err != nil {
		return err
	}
	resp, err := l.post(ctx, body, nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted:
		return nil
	case http.StatusUnauthorized:
		return errUnauthorized
	}
	return &httpStatusError{what: "notification", status: resp.StatusCode}
}

// answerURL is where answers to the server's requests go.
func (l *legacySSE) answerURL() (string, error) {
	ep := l.endpoint.Load()
	if ep == nil {
		return "", errNoEndpoint
	}
	return ep.String(), nil
}

// Close ends the GET stream, fails the requests waiting for answers and
// waits for the reader.
func (l *legacySSE) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	if l.cancel != nil {
		l.cancel()
	}
	for id, ch := range l.pending {
		close(ch)
		delete(l.pending, id)
	}
	done := l.done
	l.mu.Unlock()
	if done != nil {
		<-done
	}
	return nil
}
