package mcpline

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// httpSession is one 2025-11-25 session of a [StreamableServer].
type httpSession struct {
	id     string
	sess   Session
	ctx    context.Context // ends when the session ends
	cancel context.CancelFunc

	mu       sync.Mutex
	handlers sync.WaitGroup                // POSTs being handled; Add under mu
	ended    bool                          // guarded by mu
	stream   *eventStream                  // the open GET stream, or nil; guarded by mu
	inflight map[string]context.CancelFunc // requests by idKey; guarded by mu
}

// enter counts a POST in, unless the session has ended.
func (hs *httpSession) enter() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.ended {
		return false
	}
	hs.handlers.Add(1)
	return true
}

func (hs *httpSession) leave() { hs.handlers.Done() }

// end cancels what runs in the session, waits for its POSTs and closes
// the backend's session.
func (hs *httpSession) end() {
	hs.mu.Lock()
	if hs.ended {
		hs.mu.Unlock()
		return
	}
	hs.ended = true
	hs.mu.Unlock()
	hs.cancel()
	hs.handlers.Wait()
	hs.sess.Close()
}

// track records a request in flight for notifications/cancelled; the
// returned function forgets it.
func (hs *httpSession) track(id json.RawMessage, cancel context.CancelFunc) func() {
	key := idKey(id)
	hs.mu.Lock()
	hs.inflight[key] = cancel
	hs.mu.Unlock()
	return func() {
		hs.mu.Lock()
		delete(hs.inflight, key)
		hs.mu.Unlock()
	}
}

// cancelled cancels the request a notifications/cancelled names.
func (hs *httpSession) cancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || IsNull(p.RequestID) {
		return
	}
	hs.mu.Lock()
	cancel := hs.inflight[idKey(p.RequestID)]
	hs.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// send writes a server-initiated message on the session's GET stream; with
// none open it is dropped.
func (hs *httpSession) send(msg []byte) error {
	hs.mu.Lock()
	st := hs.stream
	hs.mu.Unlock()
	if st == nil {
		return nil
	}
	return st.write(msg)
}

// get serves the session's event stream until the client leaves or the
// session ends.
func (s *StreamableServer) get(w http.ResponseWriter, r *http.Request) {
	hs := s.session(w, r)
	if hs == nil {
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusMethodNotAllowed)
		return
	}
	st := &eventStream{w: w, flusher: flusher}
	hs.mu.Lock()
	switch {
	case hs.ended:
		hs.mu.Unlock()
		http.Error(w, "unknown or ended session", http.StatusNotFound)
		return
	case hs.stream != nil:
		hs.mu.Unlock()
		http.Error(w, "the session's event stream is open already", http.StatusConflict)
		return
	}
	hs.stream = st
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set(mcp.HeaderSessionID, hs.id)
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	hs.mu.Unlock()

	select {
	case <-r.Context().Done():
	case <-hs.ctx.Done():
	}
	hs.mu.Lock()
	if hs.stream == st {
		hs.stream = nil
	}
	hs.mu.Unlock()
	st.shut()
}

// delete ends the session the request names.
func (s *StreamableServer) delete(w http.ResponseWriter, r *http.Request) {
	hs := s.session(w, r)
	if hs == nil {
		return
	}
	s.mu.Lock()
	delete(s.sessions, hs.id)
	s.mu.Unlock()
	hs.end()
	w.WriteHeader(http.StatusOK)
}

// checkModern checks a 2026-07-28 POST's transport rules: no
// Last-Event-ID, the protocol version in the header and in params._meta,
// equal, and one we serve. It returns what is wrong and its JSON-RPC
// code, or "".
func checkModern(h http.Header, params json.RawMessage) (string, int) {
	hv, mv := h.Get(mcp.HeaderProtocolVersion), metaVersion(params)
	switch {
	case h.Get(mcp.HeaderLastEventID) != "":
		return "Last-Event-ID is not supported in protocol version " + mcp.ProtocolVersion20260728 + ": streams are not resumable", mcp.HEADER_MISMATCH
	case hv == "":
		return mcp.HeaderProtocolVersion + " header is required for requests carrying " + mcp.MetaKeyProtocolVersion, mcp.HEADER_MISMATCH
	case mv == "":
		return "missing or invalid _meta field " + mcp.MetaKeyProtocolVersion, mcp.INVALID_PARAMS
	case hv != mv:
		return fmt.Sprintf("%s header %q does not match params._meta[%q] %q", mcp.HeaderProtocolVersion, hv, mcp.MetaKeyProtocolVersion, mv), mcp.HEADER_MISMATCH
	case !mcp.IsValidProtocolVersion(mv):
		return mcp.UnsupportedProtocolVersionError{Version: mv, Supported: mcp.ValidProtocolVersions}.Error(), mcp.UNSUPPORTED_PROTOCOL_VERSION
	}
	return "", 0
}

// rebinding refuses a request that reached a loopback listener with a Host
// header that is not a loopback name (DNS rebinding); it reports whether
// it wrote the refusal.
func rebinding(w http.ResponseWriter, r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopback(local.String()) || loopback(r.Host) {
		return false
	}
	http.Error(w, fmt.Sprintf("Forbidden: Host %q is not a loopback name", r.Host), http.StatusForbidden)
	return true
}

// loopback reports whether addr (a host, or host:port) names a loopback
// interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
