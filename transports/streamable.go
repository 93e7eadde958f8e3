package transports

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/clock"
)

// streamable is our Streamable HTTP client (basic/transports): every
// message is one POST to the endpoint, carrying Mcp-Session-Id (before
// 2026-07-28) and MCP-Protocol-Version once they are known; a request's
// answer is a JSON body or an SSE stream that ends with it (server requests
// and notifications may come first). A response stream the server ends
// before the answer, after giving an event id, is resumed with a GET
// carrying Last-Event-ID once the retry time it gave has passed (SEP-1699,
// before 2026-07-28); the request itself is never sent again here. A POST
// carrying a session answered 404 means the server lost the session: that
// request and every later one but initialize fail with errSessionLost. Close
// ends the session with DELETE.
//
// Concurrency: SendRequest and SendNotification run on the callers'
// goroutines, any number at once; the client starts no goroutine. Session
// and version are atomics; they are set by the handshake (one goroutine)
// before the connection is shared.
type streamable struct {
	u       *url.URL
	raw     string // u as configured
	client  *http.Client
	headers http.Header // configured, canonical; set on every request
	clock   clock.Clock
	// notify receives the notifications read from response streams (the
	// SSE tap has taken the streams' and the server's requests out).
	notify func(method string, params json.RawMessage)

	// session and version hold one-element header values, shared by every
	// request that carries them (nobody writes into a request's header
	// values).
	session atomic.Pointer[[]string]
	version atomic.Pointer[[]string]
	modern  atomic.Bool // 2026-07-28: no session, no resumption, no DELETE
	ended   atomic.Bool // the server lost the session
	closed  atomic.Bool
}

var _ rpcTransport = (*streamable)(nil)

func newStreamable(raw string, client *http.Client, headers map[string]string, clk clock.Clock, notify func(string, json.RawMessage)) (*streamable, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	return &streamable{u: u, raw: raw, client: client, headers: headerOf(headers), clock: clk, notify: notify}, nil
}

// headerOf turns configured headers into canonical header values.
func headerOf(m map[string]string) http.Header {
	h := make(http.Header, len(m))
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}

// Header values every request shares.
var (
	valueJSON      = []string{"application/json"}
	valueAcceptAll = []string{"application/json, text/event-stream"}
	valueSSE       = []string{"text/event-stream"}
)

// Start does nothing: Streamable HTTP has no connection of its own (the
// standalone GET stream is opened after the handshake, getstream.go).
func (s *streamable) Start(context.Context) error { return nil }

func (s *streamable) SessionID() string {
	if p := s.session.Load(); p != nil {
		return (*p)[0]
	}
	return ""
}

func (s *streamable) setSession(id string) { s.session.Store(&[]string{id}) }

func (s *streamable) setProtocolVersion(v string) {
	s.version.Store(&[]string{v})
	s.modern.Store(mcp.IsModernProtocol(v))
}

// startsSession reports whether req may go out after the session was lost:
// initialize, and on 2026-07-28 (no sessions) server/discover.
func (s *streamable) startsSession(method string) bool {
	return method == string(mcp.MethodInitialize) || method == string(mcp.MethodServerDiscover) && s.modern.Load()
}

// newRequest builds one HTTP request to the endpoint with the headers every
// request carries; it returns the session id it carries ("" for none).
func (s *streamable) newRequest(ctx context.Context, method string, body []byte, accept []string, extra http.Header) (*http.Request, string, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.raw, rd)
	if err != nil {
		return nil, "", err
	}
	h := req.Header
	for k, v := range extra {
		h[k] = v
	}
	if body != nil {
		h["Content-Type"] = valueJSON
	}
	h["Accept"] = accept
	session := ""
	if p := s.session.Load(); p != nil && !s.modern.Load() {
		session = (*p)[0]
		h[headerSessionID] = *p
	}
	if p := s.version.Load(); p != nil {
		h[headerProtocolVersion] = *p
	}
	for k, v := range s.headers {
		h[k] = v
	}
	return req, session, nil
}

// do sends one request, refusing to once the session is lost (unless the
// request starts a new one); a 404 to a POST that carried the session
// records the loss.
func (s *streamable) do(req *http.Request, session string, startsSession bool) (*http.Response, error) {
	if s.ended.Load() && !startsSession {
		return nil, errSessionLost
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("transports: HTTP %s: %w", req.Method, err)
	}
	if resp.StatusCode == http.StatusNotFound {
		resp.Body.Close()
		// A GET refused with 404 may only mean the server offers no GET
		// stream.
		if req.Method != http.MethodGet && session != "" && s.SessionID() == session {
			s.session.Store(nil)
			s.ended.Store(true)
		}
		return nil, errSessionLost
	}
	return resp, nil
}

// SendRequest POSTs req and reads its answer.
func (s *streamable) SendRequest(ctx context.Context, req rpcRequest) (*rpcResponse, error) {
	body, err := appendRequest(make([]byte, 0, 80+len(req.ID)+len(req.Method)+len(req.Params)), req)
	if err != nil {
		return nil, err
	}
	cancel := context.CancelFunc(noCancel)
	if s.u.Scheme == "https" {
		// On HTTP/2, closing a response stream not read to its end can
		// wait on the connection's write lock; with the request's context
		// ended first it returns at once.
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	hreq, session, err := s.newRequest(ctx, http.MethodPost, body, valueAcceptAll, req.Header)
	if err != nil {
		return nil, err
	}
	initialize := req.Method == string(mcp.MethodInitialize)
	resp, err := s.do(hreq, session, s.startsSession(req.Method))
	if err != nil {
		if initialize && err == errSessionLost {
			return nil, errLegacyServer // a 404 to initialize: a legacy HTTP+SSE server, maybe
		}
		return nil, err
	}
	defer func() {
		cancel()
		resp.Body.Close()
	}()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, errUnauthorized
	case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted:
		if initialize && resp.StatusCode >= 400 && resp.StatusCode < 500 {
			return nil, errLegacyServer
		}
		// An error status may still carry a JSON-RPC answer (the
		// TypeScript SDK's 400 "No valid session ID").
		b, rerr := readBody(resp)
		if r, ok := decodeResponse(b); rerr == nil && ok {
			return r, nil
		}
		return nil, &httpStatusError{what: "request", status: resp.StatusCode}
	}
	if initialize {
		if id := resp.Header.Get(headerSessionID); id != "" {
			s.setSession(id)
		}
	}
	var r *rpcResponse
	switch media := mediaType(resp.Header.Get("Content-Type")); media {
	case "application/json":
		b, err := readBody(resp)
		if err != nil {
			return nil, err
		}
		var ok bool
		if r, ok = decodeResponse(b); !ok {
			return nil, errBadAnswer
		}
		if r.idNull() && r.Error == nil {
			return nil, errNoAnswerID
		}
	case "text/event-stream":
		r, err = s.readStream(ctx, resp.Body)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("transports: answered with content type %q", media)
	}
	if initialize && r.Error == nil {
		s.ended.Store(false) // a new session
	}
	return r, nil
}

func noCancel() {}

// SendNotification POSTs a notification (or a response); the server
// answers 202.
func (s *streamable) SendNotification(ctx context.Context, method string, params json.RawMessage) error {
	body, err := appendNotification(make([]byte, 0, 48+len(method)+len(params)), method, params)
	if err != nil {
		return err
	}
	return s.post(ctx, body)
}

// post sends one message that has no answer.
func (s *streamable) post(ctx context.Context, body []byte) error {
	hreq, session, err := s.newRequest(ctx, http.MethodPost, body, valueAcceptAll, nil)
	if err != nil {
		return err
	}
	resp, err := s.do(hreq, session, false)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		return nil
	case http.StatusUnauthorized:
		return errUnauthorized
	}
	return &httpStatusError{what: "notification", status: resp.StatusCode}
}

// deleteTimeout bounds the DELETE that ends a session.
const deleteTimeout = 5 * time.Second

// Close ends the session with DELETE (before 2026-07-28, which has no
// sessions), bounded by deleteTimeout on the injected clock.
func (s *streamable) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	session := s.SessionID()
	if session == "" || s.modern.Load() {
		return nil
	}
	s.session.Store(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t := clock.Or(s.clock).AfterFunc(deleteTimeout, cancel)
	defer t.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.raw, nil)
	if err != nil {
		return nil
	}
	req.Header.Set(headerSessionID, session)
	if p := s.version.Load(); p != nil {
		req.Header[headerProtocolVersion] = *p
	}
	for k, v := range s.headers {
		req.Header[k] = v
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil
	}
	return resp.Body.Close()
}

// readBody reads a JSON body (the RoundTripper bounds it to MaxFrame and
// the response budget) into a buffer of its announced size.
func readBody(resp *http.Response) ([]byte, error) {
	n := resp.ContentLength
	if n < 0 || n > MaxFrame {
		n = 512
	}
	b := make([]byte, 0, n+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		m, err := resp.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// decodeResponse reads one JSON-RPC response from b (which it keeps); ok
// is false when b is not a JSON object.
func decodeResponse(b []byte) (*rpcResponse, bool) {
	f, err := decodeOwnedFrame(b)
	if err != nil {
		return nil, false
	}
	return &rpcResponse{ID: f.ID, Result: f.Result, Error: rpcErrorOf(f.Error)}, true
}
