package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// expectStreamStart reads the frames every example/stream begins with:
// active, undeclared, then items 1..count, all stamped with id.
func expectStreamStart(t *testing.T, w wire, id string, count int) {
	t.Helper()
	for _, method := range []string{NoteExampleActive, NoteExampleUndeclared} {
		if f := w.next(t, id); f.Method != method || f.sub() != id {
			t.Fatalf("%s: want %s with subscription id %s, got %s %s (sub %q)", id, method, id, f.Method, f.Params, f.sub())
		}
	}
	for n := 1; n <= count; n++ {
		expectItem(t, w, id, n)
	}
}

func expectItem(t *testing.T, w wire, id string, n int) {
	t.Helper()
	if f := w.next(t, id); f.Method != NoteExampleItem || f.param("n") != strconv.Itoa(n) || f.sub() != id {
		t.Fatalf("%s: want item %d with subscription id %s, got %s %s", id, n, id, f.Method, f.Params)
	}
}

// exampleScenarios runs the example namespace through w: requests, an
// unsolicited notification, every stream end, client cancellation, sibling
// isolation and the request log.
func exampleScenarios(t *testing.T, ctx context.Context, w wire, modern bool, l logs) {
	env := func(params string) string { return withEnvelope(params, modern) }
	stream := func(id, params string) { w.request(t, id, MethodExampleStream, env(params)) }
	// sync makes sure a shared wire has processed everything sent so far.
	sync := func(id string) {
		if !w.perRequest() {
			w.request(t, id, MethodExampleList, env(`{}`))
			if f := w.next(t, id); f.Result == nil {
				t.Fatalf("sync %s: %+v", id, f)
			}
		}
	}

	t.Run("list", func(t *testing.T) {
		w.request(t, `"list-1"`, MethodExampleList, env(`{}`))
		if f := w.next(t, `"list-1"`); compactJSON(f.Result) != `{"items":["a","b"]}` {
			t.Fatalf("result %s, error %+v", f.Result, f.Error)
		}
		w.ended(t, `"list-1"`)
	})
	t.Run("poke sends an unsolicited notification", func(t *testing.T) {
		w.request(t, `"poke-1"`, MethodExamplePoke, env(`{}`))
		if f := w.next(t, `"poke-1"`); f.Method != NoteExampleListChanged || f.sub() != "" || len(f.ID) > 0 {
			t.Fatalf("want an unsolicited %s, got %s %s", NoteExampleListChanged, f.Method, f.Params)
		}
		if f := w.next(t, `"poke-1"`); compactJSON(f.Result) != `{}` {
			t.Fatalf("poke result %s", f.Result)
		}
		w.ended(t, `"poke-1"`)
	})
	t.Run("result then late frames", func(t *testing.T) {
		stream(`42`, `{"count":3,"intervalMs":1,"late":2}`)
		expectStreamStart(t, w, `42`, 3)
		if f := w.next(t, `42`); compactJSON(f.Result) != `{"sent":3}` || compactJSON(f.ID) != `42` {
			t.Fatalf("end: %s %s", f.ID, f.Result)
		}
		expectItem(t, w, `42`, 4)
		expectItem(t, w, `42`, 5)
		w.ended(t, `42`)
	})
	t.Run("error with data", func(t *testing.T) {
		stream(`"err-1"`, `{"count":1,"end":"error","errorCode":-32012,"errorMessage":"forbidden","errorData":{"kind":"x","n":[1]},"late":1}`)
		expectStreamStart(t, w, `"err-1"`, 1)
		f := w.next(t, `"err-1"`)
		if f.Error == nil || f.Error.Code != -32012 || f.Error.Message != "forbidden" || compactJSON(f.Error.Data) != `{"kind":"x","n":[1]}` {
			t.Fatalf("end: %+v", f.Error)
		}
		expectItem(t, w, `"err-1"`, 2)
		w.ended(t, `"err-1"`)
	})
	t.Run("server cancels", func(t *testing.T) {
		stream(`"cancel-1"`, `{"count":1,"end":"cancel","late":1}`)
		expectStreamStart(t, w, `"cancel-1"`, 1)
		if f := w.next(t, `"cancel-1"`); f.Method != mcpline.CancelledMethod || f.param("requestId") != `"cancel-1"` || len(f.ID) > 0 {
			t.Fatalf("end: %s %s", f.Method, f.Params)
		}
		expectItem(t, w, `"cancel-1"`, 2)
		w.ended(t, `"cancel-1"`)
	})
	t.Run("end without result", func(t *testing.T) {
		stream(`"eof-1"`, `{"count":1,"end":"eof","late":1}`)
		expectStreamStart(t, w, `"eof-1"`, 1)
		if w.perRequest() {
			w.ended(t, `"eof-1"`) // the response ends; nothing follows
		} else {
			expectItem(t, w, `"eof-1"`, 2) // no end frame at all
		}
	})
	t.Run("client cancels", func(t *testing.T) {
		stream(`"never-1"`, `{"count":1,"end":"never","late":1}`)
		expectStreamStart(t, w, `"never-1"`, 1)
		w.cancel(t, `"never-1"`)
		if w.perRequest() {
			waitLine(t, ctx, l.cancel, StreamCancelLine(json.RawMessage(`"never-1"`)))
			return
		}
		// The server handles the cancel before reading on: the handler has
		// ended (and sent its late frame) by the time the next reply comes.
		expectItem(t, w, `"never-1"`, 2)
		sync(`"sync-1"`)
		if !fileHasLine(l.cancel, StreamCancelLine(json.RawMessage(`"never-1"`))) {
			t.Fatal("the stream's handler was not cancelled")
		}
	})
	t.Run("sibling streams are independent", func(t *testing.T) {
		stream(`"sib-a"`, `{"end":"never"}`)
		stream(`"sib-b"`, `{"end":"never"}`)
		expectStreamStart(t, w, `"sib-a"`, 0)
		expectStreamStart(t, w, `"sib-b"`, 0)
		w.cancel(t, `"sib-a"`)
		waitLine(t, ctx, l.cancel, StreamCancelLine(json.RawMessage(`"sib-a"`)))
		sync(`"sync-2"`)
		w.request(t, `"list-2"`, MethodExampleList, env(`{}`))
		if f := w.next(t, `"list-2"`); f.Result == nil {
			t.Fatalf("list after a cancel: %+v", f)
		}
		if fileHasLine(l.cancel, StreamCancelLine(json.RawMessage(`"sib-b"`))) {
			t.Fatal("cancelling one stream cancelled its sibling")
		}
		w.cancel(t, `"sib-b"`)
		waitLine(t, ctx, l.cancel, StreamCancelLine(json.RawMessage(`"sib-b"`)))
	})
	t.Run("logs", func(t *testing.T) {
		sync(`"sync-3"`)
		for _, id := range []string{`"never-1"`, `"sib-a"`, `"sib-b"`} {
			if got := fileHasLine(l.note, CancelNote(json.RawMessage(id))); got == w.perRequest() {
				t.Errorf("note log has %q: %v (Streamable HTTP cancels by aborting the POST only)", CancelNote(json.RawMessage(id)), got)
			}
		}
		if w.perRequest() && fileHasLine(l.note, mcpline.CancelledMethod) {
			t.Error("notifications/cancelled reached the server over Streamable HTTP")
		}
		recs, err := ReadRequestLog(l.request)
		if err != nil {
			t.Fatal(err)
		}
		var rec *RequestRecord
		for i := range recs {
			if recs[i].Method == MethodExampleStream && string(recs[i].ID) == `42` {
				rec = &recs[i]
			}
		}
		if rec == nil {
			t.Fatalf("no request log line for example/stream 42 in %+v", recs)
		}
		var meta map[string]any
		_ = json.Unmarshal(rec.Meta, &meta)
		if modern && meta[mcp.MetaKeyProtocolVersion] != mcp.ProtocolVersion20260728 {
			t.Errorf("meta %s: want the modern envelope", rec.Meta)
		}
		if !modern && string(rec.Meta) != "null" {
			t.Errorf("meta %s: want null", rec.Meta)
		}
		wantMethod, wantName := "", ""
		if modern && w.perRequest() {
			wantMethod, wantName = MethodExampleStream, "probe-name"
		}
		if rec.MCPMethod != wantMethod || rec.MCPName != wantName {
			t.Errorf("headers %q %q, want %q %q", rec.MCPMethod, rec.MCPName, wantMethod, wantName)
		}
	})
}

// shake runs the handshake on a shared wire.
func shake(t *testing.T, w *sharedWire, modern bool) {
	t.Helper()
	if modern {
		w.request(t, `"discover"`, string(mcp.MethodServerDiscover), withEnvelope(`{}`, true))
	} else {
		w.request(t, `"init"`, string(mcp.MethodInitialize), `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`)
	}
	id := `"init"`
	if modern {
		id = `"discover"`
	}
	if f := w.next(t, id); f.Error != nil || f.Result == nil {
		t.Fatalf("handshake: %+v", f.Error)
	}
	if !modern {
		w.write(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
}

var handshakes = []struct {
	name   string
	args   string
	modern bool
}{
	{"legacy", "", false},
	{"modern", "", true},
	{"modern-only", " --modern-only", true},
}

func TestExampleStdio(t *testing.T) {
	for _, hs := range handshakes {
		t.Run(hs.name, func(t *testing.T) {
			ctx := testCtx(t)
			l, env := newLogs(t)
			p := startProc(t, strings.TrimSpace("--stdio"+hs.args), env...)
			w := lineWire(ctx, p.stdin, p.stdout)
			shake(t, w, hs.modern)
			exampleScenarios(t, ctx, w, hs.modern, l)
		})
	}
}

func TestExampleSocket(t *testing.T) {
	for _, hs := range handshakes {
		t.Run(hs.name, func(t *testing.T) {
			ctx := testCtx(t)
			l, env := newLogs(t)
			w := socketWire(t, ctx, hs.args, env...)
			shake(t, w, hs.modern)
			exampleScenarios(t, ctx, w, hs.modern, l)
		})
	}
}

func TestExampleStreamableHTTP(t *testing.T) {
	for _, hs := range handshakes {
		t.Run(hs.name, func(t *testing.T) {
			ctx := testCtx(t)
			l, env := newLogs(t)
			url := listenURL(t, ctx, startProc(t, "--http 127.0.0.1:0"+hs.args, env...))
			w := &streamableWire{ctx: ctx, url: url, streams: map[string]*httpCall{}}
			if hs.modern {
				resp := httpPost(t, ctx, url, `{"jsonrpc":"2.0","id":"discover","method":"server/discover","params":`+withEnvelope(`{}`, true)+`}`, modernHeaders(string(mcp.MethodServerDiscover)))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("server/discover: status %d", resp.StatusCode)
				}
				w.headers = modernHeaders
			} else {
				resp := httpPost(t, ctx, url, fmt.Sprintf(legacyInitialize, 1), nil)
				sid := resp.Header.Get(mcp.HeaderSessionID)
				if resp.StatusCode != http.StatusOK || sid == "" {
					t.Fatalf("initialize: status %d, session %q", resp.StatusCode, sid)
				}
				legacy := map[string]string{mcp.HeaderSessionID: sid, mcp.HeaderProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION}
				if resp := httpPost(t, ctx, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacy); resp.StatusCode != http.StatusAccepted {
					t.Fatalf("notifications/initialized: status %d", resp.StatusCode)
				}
				w.headers = func(string) map[string]string { return legacy }
			}
			exampleScenarios(t, ctx, w, hs.modern, l)
		})
	}
}

func TestExampleLegacySSE(t *testing.T) {
	ctx := testCtx(t)
	l, env := newLogs(t)
	url := listenURL(t, ctx, startProc(t, "--sse 127.0.0.1:0", env...))
	w := sseWire(t, ctx, url)
	shake(t, w, false)
	w.request(t, `"echo"`, string(mcp.MethodToolsCall), `{"name":"header","arguments":{"name":"X-Test"}}`)
	if f := w.next(t, `"echo"`); !strings.Contains(string(f.Result), "legacy-sse") {
		t.Fatalf("header tool over legacy SSE: %s %+v", f.Result, f.Error)
	}
	// mcp-go's own notifications reach the event stream, before the response.
	w.request(t, `"notify"`, string(mcp.MethodToolsCall), `{"name":"notify","arguments":{}}`)
	if f := w.next(t, `"notify"`); f.Method != string(mcp.MethodNotificationToolsListChanged) {
		t.Fatalf("notify tool over legacy SSE: first frame %s %s", f.Method, f.Result)
	}
	if f := w.next(t, `"notify"`); !strings.Contains(string(f.Result), "ok") {
		t.Fatalf("notify tool over legacy SSE: %s %+v", f.Result, f.Error)
	}
	exampleScenarios(t, ctx, w, false, l)
}

// TestExampleStreamParams: bad params are a JSON-RPC error, not a stream.
func TestExampleStreamParams(t *testing.T) {
	ctx := testCtx(t)
	p := startProc(t, "")
	w := lineWire(ctx, p.stdin, p.stdout)
	for i, params := range []string{`{"end":"sometimes"}`, `{"count":-1}`, `[1]`} {
		id := strconv.Itoa(i + 1)
		w.request(t, id, MethodExampleStream, params)
		if f := w.next(t, id); f.Error == nil || f.Error.Code != mcp.INVALID_PARAMS {
			t.Errorf("params %s: %+v", params, f)
		}
	}
}

// socketWire starts a socket-mode server with args and connects to it.
func socketWire(t *testing.T, ctx context.Context, args string, env ...string) *sharedWire {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	listenURL(t, ctx, startProc(t, "--socket "+path+args, env...))
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return lineWire(ctx, conn, conn)
}
