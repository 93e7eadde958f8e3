package mcpline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// StreamableHTTP returns a Streamable HTTP front that answers POSTed
// requests for the custom methods itself and hands everything else to next
// (normally a [StreamableServer] for the same MCP
// server), with the body intact.
//
// A custom request is answered with a text/event-stream response carrying
// its notifications and then its final response; the handler's context is
// the POST's, so a client aborting the POST cancels it, and nothing else.
// ErrNoResult ends the response without a final frame. Both generations of
// requests are taken: a 2026-07-28 request (its params._meta names the
// protocol version) must carry a matching Mcp-Protocol-Version header and
// an Mcp-Method header equal to its method, otherwise it is answered with
// HTTP 400 and the JSON-RPC error -32020; an older request must carry the
// Mcp-Session-Id it got at initialize (HTTP 400 otherwise), which the
// response echoes. The client must accept text/event-stream (HTTP 406
// otherwise). Like [StreamableServer], it refuses (403) a request that
// reached a loopback listener with a Host header that is not a loopback
// name.
func StreamableHTTP(next http.Handler, methods Methods) http.Handler {
	return &streamableFront{next: next, methods: methods}
}

type streamableFront struct {
	next    http.Handler
	methods Methods
}

func (f *streamableFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rebinding(w, r) {
		return
	}
	if r.Method != http.MethodPost || r.Body == nil || len(f.methods) == 0 {
		f.next.ServeHTTP(w, r)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &head) != nil || IsNull(head.ID) || f.methods[head.Method] == nil {
		f.next.ServeHTTP(w, r)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		f.next.ServeHTTP(w, r) // next answers the bad content type
		return
	}
	if !acceptsEventStream(r.Header) {
		http.Error(w, "Not Acceptable: the client must accept text/event-stream", http.StatusNotAcceptable)
		return
	}
	if msg := checkEra(r.Header, head.Method, head.Params); msg != "" {
		b, _ := json.Marshal(NewErrorReply(head.ID, mcp.HEADER_MISMATCH, msg))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(b)
		return
	} else if !isModern(r.Header, head.Params) && r.Header.Get(mcp.HeaderSessionID) == "" {
		http.Error(w, "Bad Request: "+mcp.HeaderSessionID+" header is required", http.StatusBadRequest)
		return
	}
	f.serveCall(w, r, head.ID, head.Method, head.Params)
}

// serveCall runs one custom request on the POST's response stream.
func (f *streamableFront) serveCall(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string, params json.RawMessage) {
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	if sid := r.Header.Get(mcp.HeaderSessionID); sid != "" && !isModern(r.Header, params) {
		h.Set(mcp.HeaderSessionID, sid)
	}
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	s := &eventStream{w: w, flusher: flusher}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	call := &Call{
		id: id, method: method, params: params, header: r.Header,
		out:        s.write,
		suppressed: func() bool { return false },
		onEnd: func(err error) {
			if errors.Is(err, ErrNoResult) {
				s.shut() // nothing may follow the end of the stream
			}
		},
		drop: func() { s.shut(); cancel() },
	}
	defer s.shut()
	call.run(ctx, f.methods[method])
}

// eventStream writes JSON-RPC messages as SSE "message" events until shut.
type eventStream struct {
	w       io.Writer
	flusher http.Flusher

	mu     sync.Mutex
	closed bool // guarded by mu
}

func (s *eventStream) write(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errCallClosed
	}
	if _, err := fmt.Fprintf(s.w, "event: message\ndata: %s\n\n", msg); err != nil {
		return err
	}
	if s.flusher != nil {
		s.flusher.Flush()
	}
	return nil
}

func (s *eventStream) shut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
}

// metaVersion returns params._meta's protocol version, or "".
func metaVersion(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var v string
	_ = json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v)
	return v
}

// isModern reports whether a request belongs to the 2026-07-28 generation.
func isModern(h http.Header, params json.RawMessage) bool {
	return mcp.IsModernProtocol(metaVersion(params)) || mcp.IsModernProtocol(h.Get(mcp.HeaderProtocolVersion))
}

// checkEra validates a 2026-07-28 request's standard headers; it returns
// what is wrong, or "".
func checkEra(h http.Header, method string, params json.RawMessage) string {
	if !isModern(h, params) {
		return ""
	}
	hv, mv := h.Get(mcp.HeaderProtocolVersion), metaVersion(params)
	switch {
	case hv == "" || mv == "" || hv != mv:
		return fmt.Sprintf("%s header %q does not match params._meta[%q] %q", mcp.HeaderProtocolVersion, hv, mcp.MetaKeyProtocolVersion, mv)
	case h.Get(mcp.HeaderMethod) != method:
		return fmt.Sprintf("%s header %q does not match the method %q", mcp.HeaderMethod, h.Get(mcp.HeaderMethod), method)
	}
	return ""
}

// acceptsEventStream reports whether the Accept header allows an SSE reply.
func acceptsEventStream(h http.Header) bool {
	for _, v := range h.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
			if mt == "text/event-stream" || mt == "*/*" || mt == "text/*" {
				return true
			}
		}
	}
	return false
}
