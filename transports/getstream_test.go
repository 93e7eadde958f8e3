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

// cutServer is a canned Streamable HTTP server whose standalone GET stream
// is cut after its first event: the client must wait the stream's retry
// time and resume with Last-Event-ID, never re-sending a request. A GET
// after the second is refused with 405 (no more streams), so the test ends.
type cutServer struct {
	mu      sync.Mutex
	gets    []string // Last-Event-ID of each GET, "" when absent
	posts   []string // methods POSTed
	gotGET  chan int // the number of each GET, as it arrives
	cutDone chan struct{}
}

func (s *cutServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		s.mu.Lock()
		s.gets = append(s.gets, r.Header.Get("Last-Event-ID"))
		n := len(s.gets)
		s.mu.Unlock()
		s.gotGET <- n
		if r.Header.Get("Mcp-Session-Id") != "sess-1" {
			http.Error(w, "no session", http.StatusBadRequest)
			return
		}
		if n > 2 {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		if n == 1 {
			fmt.Fprintf(w, "id: ev-1\nretry: 250\ndata: %s\n\n", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			fl.Flush()
			close(s.cutDone)
			return // the cut
		}
		fmt.Fprintf(w, "id: ev-2\ndata: %s\n\n", `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`)
		fl.Flush()
		<-r.Context().Done()
	case http.MethodPost:
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		s.mu.Lock()
		s.posts = append(s.posts, req.Method)
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", "sess-1")
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		result := `{}`
		if req.Method == "initialize" {
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"cut","version":"1"}}`
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
	}
}

func TestGETStreamResumesAfterRetry(t *testing.T) {
	s := &cutServer{gotGET: make(chan int, 8), cutDone: make(chan struct{})}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close) // after the connection's cleanup closes it
	clk := testkit.NewClock()
	d := newDialer(t)
	d.Clock = clk
	mark := clk.Mark()
	c, _ := dialWith(t, d, messages.Endpoint{URL: srv.URL + "/mcp", ProtocolVersion: messages.Protocol20251125})
	ctx := testCtx(t)

	// The stream was in place before the dial answered.
	select {
	case n := <-s.gotGET:
		if n != 1 {
			t.Fatalf("GET %d first", n)
		}
	default:
		t.Fatal("the dial answered before the standalone GET stream was opened")
	}
	c.rec.await(t, ctx, "the first stream's notification", isNote("notifications/tools/list_changed"))
	<-s.cutDone
	// The client waits the stream's retry (250 ms on the injected clock),
	// then resumes from the last event id.
	clk.WaitArmed(ctx, t, mark, 250*time.Millisecond)
	select {
	case <-s.gotGET:
		t.Fatal("the stream was reopened before its retry time")
	default:
	}
	clk.Advance(250 * time.Millisecond)
	if n := <-s.gotGET; n != 2 {
		t.Fatalf("GET %d after the retry", n)
	}
	c.rec.await(t, ctx, "the resumed stream's notification", isNote("notifications/resources/list_changed"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gets[1] != "ev-1" {
		t.Errorf("the resumed GET carried Last-Event-ID %q, want ev-1", s.gets[1])
	}
	if strings.Join(s.posts, ",") != "initialize,notifications/initialized" {
		t.Errorf("POSTs %v: a request was sent again", s.posts)
	}
}

// A server that answers the GET with 400, 404 or 405 offers no stream: the
// connection works, and the GET is not tried again (nothing loops).
func TestGETStreamRefusedIsNotALostSession(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			var gets, posts int
			var mu sync.Mutex
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				if r.Method == http.MethodGet {
					gets++
					w.WriteHeader(status)
					return
				}
				posts++
				var req struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				body, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(body, &req)
				if len(req.ID) == 0 {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				result := `{"content":[{"type":"text","text":"echo: x"}]}`
				if req.Method == "initialize" {
					result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"no-get","version":"1"}}`
				}
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
			}))
			t.Cleanup(srv.Close)
			c, _ := dial(t, messages.Endpoint{URL: srv.URL, ProtocolVersion: messages.Protocol20251125})
			echo(t, c, "x")
			echo(t, c, "x")
			mu.Lock()
			defer mu.Unlock()
			if gets != 1 {
				t.Errorf("%d GETs, want 1", gets)
			}
		})
	}
}
