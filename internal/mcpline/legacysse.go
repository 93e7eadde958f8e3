package mcpline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// LegacySSE is a minimal front for the legacy HTTP+SSE transport, written
// because mcp-go's SSEServer cannot write custom frames on its event stream
// (and drops events when its queue is full):
//   - GET on the SSE path opens a session: the response is an event stream
//     whose first event, "endpoint", names the message URL
//     (MessagePath?sessionId=ID); every response and notification of the
//     session follows on it as a "message" event;
//   - POST on the message URL carries one JSON-RPC message; it is answered
//     202 Accepted once the message is taken (a notifications/cancelled
//     after the cancelled handler has returned), and any reply goes on the
//     event stream;
//   - any other method on either path is answered 405, so that a client
//     trying Streamable HTTP first falls back to this transport.
//
// Each session behaves like a line connection ([ServeWith]): ordinary
// messages go to the MCP server through a registered session (so its
// notifications reach the stream), custom methods to their Handler with a
// context that notifications/cancelled ends, and the POST's headers are
// available through [RequestHeader] and [Call.Header]. A session ends
// when its GET ends or Close is called. A request that reached a loopback
// listener with a Host header that is not a loopback name is refused
// (403), against DNS rebinding.
type LegacySSE struct {
	backend     Backend
	ssePath     string
	messagePath string
	opts        Options
	done        chan struct{}
	closeOnce   sync.Once

	mu       sync.Mutex
	sessions map[string]*conn // guarded by mu
}

// NewLegacySSE returns a legacy HTTP+SSE front for srv with the event
// stream at ssePath and messages at messagePath (for example "/mcp" and
// "/message"). opts.SessionID is ignored: every session gets a random id.
func NewLegacySSE(b Backend, ssePath, messagePath string, opts Options) *LegacySSE {
	return &LegacySSE{
		backend:     b,
		ssePath:     ssePath,
		messagePath: messagePath,
		opts:        opts,
		done:        make(chan struct{}),
		sessions:    make(map[string]*conn),
	}
}

// Close ends every session's event stream; it does not wait for them.
func (s *LegacySSE) Close() {
	s.closeOnce.Do(func() { close(s.done) })
}

// ServeHTTP serves the event stream and the message endpoint.
func (s *LegacySSE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rebinding(w, r) {
		return
	}
	switch r.URL.Path {
	case s.ssePath:
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "this endpoint speaks only the legacy HTTP+SSE transport", http.StatusMethodNotAllowed)
			return
		}
		s.serveStream(w, r)
	case s.messagePath:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST JSON-RPC messages here", http.StatusMethodNotAllowed)
			return
		}
		s.serveMessage(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveStream runs one session for as long as its GET lasts.
func (s *LegacySSE) serveStream(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	id, err := newSessionID()
	if err != nil {
		http.Error(w, "cannot create a session", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()

	stream := &eventStream{w: w, flusher: flusher}
	opts := s.opts
	opts.SessionID = id
	c := newConn(s.backend, stream.write, opts)
	if err := c.open(ctx); err != nil {
		return
	}
	// The session is known before the client can learn its endpoint, and
	// the endpoint event precedes every message.
	s.mu.Lock()
	s.sessions[id] = c
	s.mu.Unlock()
	c.writeMu.Lock()
	_, err = fmt.Fprintf(w, "event: endpoint\ndata: %s?sessionId=%s\n\n", s.messagePath, id)
	flusher.Flush()
	c.writeMu.Unlock()
	if err != nil {
		c.stop()
	}

	<-c.ctx.Done() // the client left, Close was called or a write failed

	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
	_ = c.close()
	stream.shut()
}

// serveMessage takes one POSTed message for a session.
func (s *LegacySSE) serveMessage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c := s.sessions[r.URL.Query().Get("sessionId")]
	s.mu.Unlock()
	if c == nil {
		http.Error(w, "unknown or ended session", http.StatusNotFound)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if !json.Valid(body) {
		b, _ := json.Marshal(NewErrorReply(nil, mcp.PARSE_ERROR, "request body is not valid JSON"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(b)
		return
	}
	c.dispatch(body, r.Header.Clone())
	w.WriteHeader(http.StatusAccepted)
}

// newSessionID returns 128 random bits in hex.
func newSessionID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
