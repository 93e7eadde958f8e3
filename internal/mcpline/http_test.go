package mcpline

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}`

// postRaw POSTs body with headers and returns the response (body open).
func postRaw(t *testing.T, ctx context.Context, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// events returns a function reading the next message event of resp.
func events(t *testing.T, body io.Reader) (next func() frame, end func() error) {
	s := &sseReader{r: bufio.NewReader(body)}
	next = func() frame {
		t.Helper()
		ev, data, err := s.next()
		if err != nil || ev != "message" {
			t.Fatalf("event %q %q: %v", ev, data, err)
		}
		return decode(t, []byte(data))
	}
	end = func() error {
		_, data, err := s.next()
		if err == nil {
			return errors.New("another event: " + data)
		}
		if err == io.EOF {
			return nil
		}
		return err
	}
	return next, end
}

func TestStreamableHTTP(t *testing.T) {
	ctx := testCtx(t)
	p := newProbe()
	ts := httptest.NewServer(StreamableHTTP(NewStreamableServer(newMCP()), p.methods()))
	t.Cleanup(ts.Close)

	init := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, nil)
	sid := init.Header.Get(mcp.HeaderSessionID)
	if init.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", init.StatusCode, sid)
	}
	legacy := map[string]string{mcp.HeaderSessionID: sid, mcp.HeaderProtocolVersion: "2025-11-25", "X-Test": "legacy"}
	modern := map[string]string{mcp.HeaderProtocolVersion: "2026-07-28", mcp.HeaderMethod: "x/stream", "X-Test": "modern"}

	t.Run("legacy result then late", func(t *testing.T) {
		resp := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":"a","method":"x/stream","params":{"end":"result"}}`, legacy)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get(mcp.HeaderSessionID) != sid {
			t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
		}
		next, end := events(t, resp.Body)
		checkStreamFrames(t, `"a"`, next)
		if f := next(); string(f.Result) != `{"done":true}` {
			t.Fatalf("end %+v", f)
		}
		if f := next(); f.Params.N != 3 {
			t.Fatalf("late %+v", f)
		}
		if err := end(); err != nil {
			t.Fatal(err)
		}
		if h := <-p.headers; h != "legacy" {
			t.Errorf("handler saw X-Test %q", h)
		}
	})
	t.Run("modern error", func(t *testing.T) {
		resp := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":5,"method":"x/stream","params":{"end":"error",`+modernMeta+`}}`, modern)
		next, end := events(t, resp.Body)
		checkStreamFrames(t, `5`, next)
		if f := next(); f.Error == nil || f.Error.Code != -32012 || string(f.Error.Data) != `{"why":"test"}` {
			t.Fatalf("end %+v", f)
		}
		next()
		if err := end(); err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get(mcp.HeaderSessionID) != "" {
			t.Error("a modern response carries a session id")
		}
		<-p.headers
	})
	t.Run("eof and server cancel", func(t *testing.T) {
		resp := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":"e","method":"x/stream","params":{"end":"eof"}}`, legacy)
		next, end := events(t, resp.Body)
		checkStreamFrames(t, `"e"`, next)
		if err := end(); err != nil {
			t.Fatalf("after eof: %v", err)
		}
		resp = postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":"c","method":"x/stream","params":{"end":"cancel"}}`, legacy)
		next, _ = events(t, resp.Body)
		checkStreamFrames(t, `"c"`, next)
		if f := next(); f.Method != CancelledMethod || string(f.Params.RequestID) != `"c"` {
			t.Fatalf("server cancel %+v", f)
		}
		<-p.headers
		<-p.headers
	})
	t.Run("abort cancels only that request", func(t *testing.T) {
		reqCtx, abort := context.WithCancel(ctx)
		resp := postRaw(t, reqCtx, ts.URL, `{"jsonrpc":"2.0","id":"n","method":"x/stream","params":{}}`, legacy)
		next, _ := events(t, resp.Body)
		checkStreamFrames(t, `"n"`, next)
		abort()
		select {
		case id := <-p.cancelled:
			if id != `"n"` {
				t.Fatalf("cancelled %s", id)
			}
		case <-ctx.Done():
			t.Fatal("aborting the POST did not cancel the handler")
		}
		<-p.headers
	})
	t.Run("raw frames and disconnect", func(t *testing.T) {
		resp := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":"w","method":"x/stream","params":{"end":"raw"}}`, legacy)
		s := &sseReader{r: bufio.NewReader(resp.Body)}
		next := func() frame {
			_, data, err := s.next()
			if err != nil {
				t.Fatal(err)
			}
			return decode(t, []byte(data))
		}
		checkStreamFrames(t, `"w"`, next)
		for _, want := range []string{"not json", `{"jsonrpc":"2.0","id":"w","error":{"code":"E1","message":"odd"}}`} {
			if _, data, err := s.next(); err != nil || data != want {
				t.Fatalf("raw frame %q, %v; want %q", data, err, want)
			}
		}
		if _, data, err := s.next(); err != io.EOF {
			t.Fatalf("after raw: %q %v", data, err)
		}
		<-p.headers

		sibling := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":"s","method":"x/stream","params":{}}`, legacy)
		nextSibling, _ := events(t, sibling.Body)
		checkStreamFrames(t, `"s"`, nextSibling)
		resp = postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":"d","method":"x/stream","params":{"end":"disconnect"}}`, legacy)
		next, end := events(t, resp.Body)
		checkStreamFrames(t, `"d"`, next)
		if err := end(); err != nil {
			t.Fatalf("after Disconnect: %v", err)
		}
		select {
		case id := <-p.cancelled:
			t.Fatalf("Disconnect on Streamable HTTP cancelled %s", id)
		default:
		}
		<-p.headers
		<-p.headers
	})
	t.Run("refusals", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"x/stream","params":{"end":"result",` + modernMeta + `}}`
		bad := map[string]string{mcp.HeaderProtocolVersion: "2026-07-28", mcp.HeaderMethod: "x/other"}
		resp := postRaw(t, ctx, ts.URL, body, bad)
		b, _ := io.ReadAll(resp.Body)
		if f := decode(t, b); resp.StatusCode != http.StatusBadRequest || f.Error == nil || f.Error.Code != mcp.HEADER_MISMATCH {
			t.Errorf("wrong Mcp-Method: %d %s", resp.StatusCode, b)
		}
		if resp := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"x/echo"}`, nil); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("legacy request without a session: %d", resp.StatusCode)
		}
		if resp := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"x/echo"}`, map[string]string{mcp.HeaderSessionID: sid, "Accept": "application/json"}); resp.StatusCode != http.StatusNotAcceptable {
			t.Errorf("no event stream accepted: %d", resp.StatusCode)
		}
	})
	t.Run("ordinary methods reach mcp-go", func(t *testing.T) {
		resp := postRaw(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hi"}}`, legacy)
		b, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(b), "hi legacy") {
			t.Fatalf("tools/call: %d %s", resp.StatusCode, b)
		}
	})
}

func TestLegacySSE(t *testing.T) {
	ctx := testCtx(t)
	p := newProbe()
	front := NewLegacySSE(newMCP(), "/mcp", "/message", Options{Methods: p.methods()})
	ts := httptest.NewServer(front)
	t.Cleanup(ts.Close)

	if resp := postRaw(t, ctx, ts.URL+"/mcp", `{}`, nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /mcp: %d", resp.StatusCode)
	}
	s, endpoint := openSSE(t, ctx, ts.URL+"/mcp")
	next := func() frame {
		t.Helper()
		ev, data, err := s.next()
		if err != nil || ev != "message" {
			t.Fatalf("event %q %q: %v", ev, data, err)
		}
		return decode(t, []byte(data))
	}
	msg := func(body string) {
		t.Helper()
		if resp := postRaw(t, ctx, ts.URL+endpoint, body, map[string]string{"X-Test": "sse"}); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: %d", body, resp.StatusCode)
		}
	}

	msg(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if f := next(); string(f.ID) != "1" || f.Error != nil {
		t.Fatalf("initialize: %+v", f)
	}
	msg(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	msg(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hi"}}`)
	if f := next(); !strings.Contains(string(f.Result), "hi sse") {
		t.Fatalf("tools/call: %s", f.Result)
	}

	msg(`{"jsonrpc":"2.0","id":"r","method":"x/stream","params":{"end":"result"}}`)
	checkStreamFrames(t, `"r"`, next)
	if f := next(); string(f.Result) != `{"done":true}` {
		t.Fatalf("end %+v", f)
	}
	next() // late
	if h := <-p.headers; h != "sse" {
		t.Errorf("handler saw X-Test %q", h)
	}

	msg(`{"jsonrpc":"2.0","id":"n","method":"x/stream","params":{}}`)
	checkStreamFrames(t, `"n"`, next)
	msg(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"n"}}`)
	select {
	case id := <-p.cancelled:
		if id != `"n"` {
			t.Fatalf("cancelled %s", id)
		}
	default:
		t.Fatal("the cancel POST was answered before the handler ended")
	}
	<-p.headers

	if resp := postRaw(t, ctx, ts.URL+"/message?sessionId=nope", `{}`, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: %d", resp.StatusCode)
	}

	// Disconnect ends its session's event stream, with nothing after its
	// frames; another session lives on until Close.
	s2, endpoint2 := openSSE(t, ctx, ts.URL+"/mcp")
	if resp := postRaw(t, ctx, ts.URL+endpoint2, `{"jsonrpc":"2.0","id":"d","method":"x/stream","params":{"end":"disconnect"}}`, nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST disconnect: %d", resp.StatusCode)
	}
	checkStreamFrames(t, `"d"`, func() frame {
		_, data, err := s2.next()
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, []byte(data))
	})
	if ev, data, err := s2.next(); err != io.EOF {
		t.Fatalf("after Disconnect: %q %q %v", ev, data, err)
	}
	<-p.headers

	front.Close()
	if _, _, err := s.next(); err != io.EOF {
		t.Fatalf("after Close: %v", err)
	}
}

// openSSE opens a legacy SSE session and returns its event reader and
// message endpoint.
func openSSE(t *testing.T, ctx context.Context, url string) (*sseReader, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	get, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = get.Body.Close() })
	s := &sseReader{r: bufio.NewReader(get.Body)}
	ev, endpoint, err := s.next()
	if err != nil || ev != "endpoint" || !strings.HasPrefix(endpoint, "/message?sessionId=") {
		t.Fatalf("first event %q %q: %v", ev, endpoint, err)
	}
	return s, endpoint
}
