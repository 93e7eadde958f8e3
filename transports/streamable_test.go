package transports

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/messages"
)

// resumeServer is a canned Streamable HTTP server that ends a tools/call's
// response stream after one notification and an event id (SEP-1699's
// polling): the answer comes only on the GET that resumes it with
// Last-Event-ID. It offers no standalone GET stream (405) and records what
// it was sent.
type resumeServer struct {
	mu       sync.Mutex
	posts    []string // methods POSTed
	resumes  []http.Header
	deletes  []string // Mcp-Session-Id of each DELETE
	callID   json.RawMessage
	cutDone  chan struct{}
	resumed  chan struct{}
	postHdrs []http.Header // headers of the POSTs after initialize
}

func (s *resumeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		if r.Header.Get("Last-Event-ID") == "" {
			w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
			return
		}
		s.mu.Lock()
		s.resumes = append(s.resumes, r.Header.Clone())
		id := s.callID
		s.mu.Unlock()
		close(s.resumed)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: r-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n", id)
	case http.MethodPost:
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		s.mu.Lock()
		s.posts = append(s.posts, req.Method)
		if req.Method != "initialize" {
			s.postHdrs = append(s.postHdrs, r.Header.Clone())
		}
		s.mu.Unlock()
		switch {
		case len(req.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		case req.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s-1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"resume","version":"1"}}}`, req.ID)
		case req.Method == "tools/call":
			s.mu.Lock()
			s.callID = req.ID
			s.mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: r-1\nretry: 250\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n")
			w.(http.Flusher).Flush()
			close(s.cutDone) // the server ends the stream before the answer
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, req.ID)
		}
	case http.MethodDelete:
		s.mu.Lock()
		s.deletes = append(s.deletes, r.Header.Get("Mcp-Session-Id"))
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}
}

// TestResponseStreamResumed: a response stream the server ends before the
// answer, after an event id, is resumed with a GET carrying Last-Event-ID
// and the session once the retry time the server gave has passed on the
// injected clock; the request is never sent again; every POST after
// initialize carries the session and protocol headers; Close ends the
// session with DELETE.
func TestResponseStreamResumed(t *testing.T) {
	s := &resumeServer{cutDone: make(chan struct{}), resumed: make(chan struct{})}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	clk := testkit.NewClock()
	d := newDialer(t)
	d.Clock = clk
	c, _ := dialWith(t, d, messages.Endpoint{URL: srv.URL + "/mcp", ProtocolVersion: messages.Protocol20251125})
	ctx := testCtx(t)
	mark := clk.Mark()

	id := c.send("tools/call", toolParams("slow", nil))
	c.rec.await(t, ctx, "the notification on the response stream", isNote("notifications/message"))
	<-s.cutDone
	clk.WaitArmed(ctx, t, mark, 250*time.Millisecond)
	select {
	case <-s.resumed:
		t.Fatal("the stream was resumed before its retry time")
	default:
	}
	clk.Advance(250 * time.Millisecond)
	res := c.result(id)
	if res.Err != nil || !strings.Contains(string(res.Result), `"done"`) {
		t.Fatalf("call after the resumption: %+v", res)
	}
	cc := c.close()
	if cc.Err != nil {
		t.Errorf("ConnClosed: %v", cc.Err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if got := strings.Join(s.posts, ","); got != "initialize,notifications/initialized,tools/call" {
		t.Errorf("POSTs %s: want the call sent once", got)
	}
	if len(s.resumes) != 1 {
		t.Fatalf("%d resuming GETs, want 1", len(s.resumes))
	}
	h := s.resumes[0]
	if h.Get("Last-Event-ID") != "r-1" || h.Get("Mcp-Session-Id") != "s-1" || h.Get("Mcp-Protocol-Version") != "2025-11-25" || h.Get("Accept") != "text/event-stream" {
		t.Errorf("resuming GET headers: %v", h)
	}
	for i, h := range s.postHdrs {
		if h.Get("Mcp-Session-Id") != "s-1" || h.Get("Mcp-Protocol-Version") != "2025-11-25" ||
			h.Get("Accept") != "application/json, text/event-stream" || h.Get("Content-Type") != "application/json" {
			t.Errorf("POST %d headers: %v", i, h)
		}
	}
	if len(s.deletes) != 1 || s.deletes[0] != "s-1" {
		t.Errorf("DELETEs with sessions %q, want one with s-1", s.deletes)
	}
}
