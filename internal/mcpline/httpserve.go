package mcpline

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// StreamableServer serves a [Backend] over Streamable HTTP: every message
// that is not a custom method (put [StreamableHTTP] in front of it for
// those). Both generations of the protocol are served on one endpoint,
// told apart per request:
//   - 2025-11-25 and older: initialize opens a session, named by the
//     Mcp-Session-Id response header, which every later request must carry
//     (HTTP 400 without it, 404 once the session is unknown or ended);
//     requests are answered with application/json, or with an event stream
//     when the handler sends messages for its request first (progress,
//     logs); a GET opens the session's event stream for server-initiated
//     messages (one at a time: 409 for a second; without one they are
//     dropped); DELETE ends the session; notifications/cancelled cancels a
//     request in flight;
//   - 2026-07-28: no sessions. Each request carries its protocol version
//     in params._meta and in the Mcp-Protocol-Version header (they must
//     agree: HTTP 400 and -32020 otherwise) and is served by a session of
//     its own; GET and DELETE are answered 405; an error response's HTTP
//     status follows its code (404 for -32601, 400 for the protocol's
//     errors).
//
// Requests on a loopback listener whose Host header is not a loopback
// name are refused (403), against DNS rebinding.
type StreamableServer struct {
	backend Backend
	ctx     context.Context // ends with Close; the sessions' context
	cancel  context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*httpSession // guarded by mu
}

// NewStreamableServer returns a Streamable HTTP server for b.
func NewStreamableServer(b Backend) *StreamableServer {
	ctx, cancel := context.WithCancel(context.Background())
	return &StreamableServer{backend: b, ctx: ctx, cancel: cancel, sessions: map[string]*httpSession{}}
}

// Close ends every session: their event streams end, handlers in flight
// are cancelled and waited for, and the backend's sessions are closed.
func (s *StreamableServer) Close() {
	s.cancel()
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[string]*httpSession{}
	s.mu.Unlock()
	for _, hs := range all {
		hs.end()
	}
}

// ServeHTTP serves one HTTP request on the MCP endpoint.
func (s *StreamableServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rebinding(w, r) {
		return
	}
	modern := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
		return
	case http.MethodGet, http.MethodDelete:
		if !modern {
			if r.Method == http.MethodGet {
				s.get(w, r)
			} else {
				s.delete(w, r)
			}
			return
		}
	}
	w.Header().Set("Allow", http.MethodPost)
	if !modern {
		w.Header().Set("Allow", "GET, POST, DELETE")
	}
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
}

// session returns the session the request names, or writes the error.
func (s *StreamableServer) session(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(mcp.HeaderSessionID)
	if id == "" {
		http.Error(w, "Bad Request: "+mcp.HeaderSessionID+" header is required", http.StatusBadRequest)
		return nil
	}
	s.mu.Lock()
	hs := s.sessions[id]
	s.mu.Unlock()
	if hs == nil {
		http.Error(w, "unknown or ended session", http.StatusNotFound)
	}
	return hs
}

func (s *StreamableServer) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &head) != nil {
		writeReply(w, http.StatusBadRequest, mustJSON(NewErrorReply(nil, mcp.PARSE_ERROR, "request body is not valid JSON")))
		return
	}
	isRequest := !IsNull(head.ID) && head.Method != ""
	if isModern(r.Header, head.Params) {
		if msg, code := checkModern(r.Header, head.Params); msg != "" {
			writeReply(w, http.StatusBadRequest, mustJSON(NewErrorReply(head.ID, code, msg)))
			return
		}
		if !isRequest {
			w.WriteHeader(http.StatusAccepted) // nothing of 2026-07-28 needs a session's notifications
			return
		}
		sess, err := s.backend.Open(r.Context(), "", func([]byte) error { return errCallClosed })
		if err != nil {
			http.Error(w, "cannot open a session", http.StatusInternalServerError)
			return
		}
		defer sess.Close()
		respond(w, r, sess, body, true)
		return
	}
	if v := r.Header.Get(mcp.HeaderProtocolVersion); v != "" && head.Method != string(mcp.MethodInitialize) && !slices.Contains(mcp.ValidProtocolVersions, v) {
		http.Error(w, "Bad Request: unsupported "+mcp.HeaderProtocolVersion+" "+v, http.StatusBadRequest)
		return
	}
	var hs *httpSession
	if isRequest && head.Method == string(mcp.MethodInitialize) {
		if hs = s.open(w, r); hs == nil {
			return
		}
	} else if hs = s.session(w, r); hs == nil {
		return
	}
	if !hs.enter() {
		http.Error(w, "unknown or ended session", http.StatusNotFound)
		return
	}
	defer hs.leave()
	w.Header().Set(mcp.HeaderSessionID, hs.id)
	if !isRequest {
		if head.Method == CancelledMethod {
			hs.cancelled(head.Params)
		}
		hs.sess.Handle(r.Context(), body, r.Header, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(hs.ctx, cancel)
	defer stop()
	defer hs.track(head.ID, cancel)()
	respond(w, r.WithContext(ctx), hs.sess, body, false)
}

// open starts a session for an initialize request, or writes the error.
func (s *StreamableServer) open(w http.ResponseWriter, r *http.Request) *httpSession {
	id, err := newSessionID()
	if err != nil {
		http.Error(w, "cannot create a session", http.StatusInternalServerError)
		return nil
	}
	ctx, cancel := context.WithCancel(s.ctx)
	hs := &httpSession{id: id, ctx: ctx, cancel: cancel, inflight: map[string]context.CancelFunc{}}
	sess, err := s.backend.Open(ctx, id, hs.send)
	if err != nil {
		cancel()
		http.Error(w, "cannot open a session", http.StatusInternalServerError)
		return nil
	}
	hs.sess = sess
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		cancel()
		sess.Close()
		http.Error(w, "server is shutting down", http.StatusServiceUnavailable)
		return nil
	}
	s.sessions[id] = hs
	return hs
}

// respond handles one request and writes its reply: JSON, or an event
// stream once the handling sent a message of its own.
func respond(w http.ResponseWriter, r *http.Request, sess Session, body []byte, modern bool) {
	ps := &postStream{w: w}
	ps.flusher, _ = w.(http.Flusher)
	reply := sess.Handle(r.Context(), body, r.Header, ps.write)
	ps.finish(reply, modern)
}

// postStream is a POST's response: JSON until the first related message
// turns it into an event stream.
type postStream struct {
	w       http.ResponseWriter
	flusher http.Flusher

	mu     sync.Mutex
	events *eventStream // set once upgraded; guarded by mu
	done   bool         // the reply was written; guarded by mu
}

func (p *postStream) write(msg []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || p.flusher == nil {
		return errCallClosed
	}
	if p.events == nil {
		h := p.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		p.w.WriteHeader(http.StatusOK)
		p.events = &eventStream{w: p.w, flusher: p.flusher}
	}
	return p.events.write(msg)
}

func (p *postStream) finish(reply []byte, modern bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	switch {
	case p.events != nil:
		if reply != nil {
			_ = p.events.write(reply)
		}
		p.events.shut()
	case reply == nil:
		p.w.WriteHeader(http.StatusAccepted)
	default:
		status := http.StatusOK
		if modern {
			status = statusFor(reply)
		}
		writeReply(p.w, status, reply)
	}
}

// statusFor returns the HTTP status 2026-07-28 gives an error response.
func statusFor(reply []byte) int {
	var r struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(reply, &r) != nil || r.Error == nil {
		return http.StatusOK
	}
	switch r.Error.Code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.HEADER_MISMATCH, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func writeReply(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
