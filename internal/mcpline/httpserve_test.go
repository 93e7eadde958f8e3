package mcpline

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestStreamableServer: sessions (initialize opens one; requests without
// it or with an unknown one are refused; DELETE ends it), the GET stream
// carrying server-initiated messages, a request's own messages turning its
// response into an event stream, and 2026-07-28 requests served without a
// session, with their error statuses.
func TestStreamableServer(t *testing.T) {
	ctx := testCtx(t)
	srv := NewStreamableServer(newMCP())
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	body := func(resp *http.Response) string {
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}

	init := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, nil)
	sid := init.Header.Get(mcp.HeaderSessionID)
	if init.StatusCode != http.StatusOK || sid == "" || init.Header.Get("Content-Type") != "application/json" || !strings.Contains(body(init), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d %v", init.StatusCode, init.Header)
	}
	legacy := map[string]string{mcp.HeaderSessionID: sid, mcp.HeaderProtocolVersion: "2025-11-25"}

	if r := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("without a session: %d", r.StatusCode)
	}
	if r := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{mcp.HeaderSessionID: "nope"}); r.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown session: %d", r.StatusCode)
	}
	if r := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacy); r.StatusCode != http.StatusAccepted {
		t.Fatalf("a notification: %d", r.StatusCode)
	}

	// The GET stream carries what the session sends; a second is refused.
	get, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	get.Header.Set(mcp.HeaderSessionID, sid)
	get.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(get)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", stream, err)
	}
	defer stream.Body.Close()
	if again, err := http.DefaultClient.Do(get.Clone(ctx)); err != nil || again.StatusCode != http.StatusConflict {
		t.Fatalf("a second GET: %v %v", again, err)
	}
	if r := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":3,"method":"x/push"}`, legacy); !strings.Contains(body(r), `"pushed":true`) {
		t.Fatal("x/push")
	}
	getEvents := &sseReader{r: bufio.NewReader(stream.Body)}
	if ev, data, err := getEvents.next(); err != nil || ev != "message" || data != `{"jsonrpc":"2.0","method":"x/pushed"}` {
		t.Fatalf("GET stream: %q %q %v", ev, data, err)
	}

	// A request's own message comes first on its response, now an event stream.
	r := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":4,"method":"x/related"}`, legacy)
	if r.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("x/related: %v", r.Header)
	}
	next, end := events(t, r.Body)
	if f := next(); f.Method != "x/progress" {
		t.Fatalf("first: %+v", f)
	}
	if f := next(); string(f.ID) != "4" || string(f.Result) != "{}" {
		t.Fatalf("then: %+v", f)
	}
	if err := end(); err != nil {
		t.Fatal(err)
	}

	// 2026-07-28: no session, no GET, statuses by error code.
	modern := map[string]string{mcp.HeaderProtocolVersion: "2026-07-28", mcp.HeaderMethod: "nope/nope"}
	r = postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":5,"method":"nope/nope","params":{`+modernMeta+`}}`, modern)
	if r.StatusCode != http.StatusNotFound || r.Header.Get(mcp.HeaderSessionID) != "" {
		t.Fatalf("modern unknown method: %d %v", r.StatusCode, r.Header)
	}
	modern[mcp.HeaderProtocolVersion] = "2025-11-25"
	if r := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":6,"method":"ping","params":{`+modernMeta+`}}`, modern); r.StatusCode != http.StatusBadRequest || !strings.Contains(body(r), "-32020") {
		t.Fatalf("modern with mismatched versions: %d", r.StatusCode)
	}
	mget, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL, nil)
	mget.Header.Set(mcp.HeaderProtocolVersion, "2026-07-28")
	if r, err := http.DefaultClient.Do(mget); err != nil || r.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("modern GET: %v %v", r, err)
	}

	// DELETE ends the session and its GET stream.
	del, _ := http.NewRequestWithContext(ctx, http.MethodDelete, ts.URL, nil)
	del.Header.Set(mcp.HeaderSessionID, sid)
	if r, err := http.DefaultClient.Do(del); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %v %v", r, err)
	}
	if _, _, err := getEvents.next(); err != io.EOF {
		t.Fatalf("the GET stream after DELETE: %v", err)
	}
	if r := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, legacy); r.StatusCode != http.StatusNotFound {
		t.Fatalf("after DELETE: %d", r.StatusCode)
	}
}

// TestDNSRebinding: on a loopback listener, a request whose Host is not a
// loopback name is refused, custom method or not; a loopback name passes.
func TestDNSRebinding(t *testing.T) {
	ctx := testCtx(t)
	srv := NewStreamableServer(newMCP())
	ts := httptest.NewServer(StreamableHTTP(srv, newProbe().methods()))
	t.Cleanup(func() { ts.Close(); srv.Close() })
	sse := httptest.NewServer(NewLegacySSE(newMCP(), "/mcp", "/message", Options{}))
	t.Cleanup(sse.Close)
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, sse.URL+"/mcp", nil)
	get.Host = "evil.example"
	if resp, err := http.DefaultClient.Do(get); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("legacy SSE with a foreign Host: %v %v", resp, err)
	}
	for _, c := range []struct {
		host string
		want int
	}{{"evil.example", http.StatusForbidden}, {"evil.example:80", http.StatusForbidden}, {"localhost", http.StatusOK}, {"[::1]:9", http.StatusOK}} {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"x/echo","params":{` + modernMeta + `}}`,
		} {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = c.host
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if strings.Contains(body, "x/echo") {
				req.Header.Set(mcp.HeaderProtocolVersion, "2026-07-28")
				req.Header.Set(mcp.HeaderMethod, "x/echo")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("Host %q, %.40s: %d, want %d", c.host, body, resp.StatusCode, c.want)
			}
		}
	}
}
