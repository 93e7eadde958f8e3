package testserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/eventsrv"
)

// toolCall calls a tool that must succeed and returns its text.
type toolCall func(t *testing.T, name, args string) string

// toolText returns a tools/call result's text, failing on a tool error.
func toolText(t *testing.T, f wireFrame) string {
	t.Helper()
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || len(r.Content) != 1 || r.IsError {
		t.Fatalf("tool result %s, error %+v", f.Result, f.Error)
	}
	return r.Content[0].Text
}

// sharedTool calls tools on a shared wire.
func sharedTool(w *sharedWire, modern bool) toolCall {
	n := 0
	return func(t *testing.T, name, args string) string {
		t.Helper()
		n++
		id := fmt.Sprintf(`"tool-%d"`, n)
		w.request(t, id, string(mcp.MethodToolsCall), withEnvelope(fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args), modern))
		for {
			if f := w.next(t, id); len(f.ID) > 0 {
				return toolText(t, f)
			}
		}
	}
}

// httpTool calls tools over Streamable HTTP with the headers of a wire.
func httpTool(ctx context.Context, url string, headers func(string) map[string]string, modern bool) toolCall {
	n := 0
	return func(t *testing.T, name, args string) string {
		t.Helper()
		n++
		h := headers(string(mcp.MethodToolsCall))
		if modern {
			h[mcp.HeaderName] = name
		}
		params := withEnvelope(fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args), modern)
		resp := httpPost(t, ctx, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":"tool-%d","method":"tools/call","params":%s}`, n, params), h)
		if resp.Header.Get("Content-Type") != "text/event-stream" {
			b, _ := io.ReadAll(resp.Body)
			return toolText(t, decodeFrame(t, b))
		}
		events := &sseEvents{r: bufio.NewReader(resp.Body)}
		for {
			_, data, err := events.next()
			if err != nil {
				t.Fatalf("tools/call %s: %v", name, err)
			}
			if f := decodeFrame(t, []byte(data)); len(f.ID) > 0 {
				return toolText(t, f)
			}
		}
	}
}

// cursorOf returns a frame's cursor, which must be a string.
func cursorOf(t *testing.T, f wireFrame) string {
	t.Helper()
	var c string
	if err := json.Unmarshal([]byte(f.param("cursor")), &c); err != nil || c == "" {
		t.Fatalf("%s: cursor %s is not a non-empty string", f.Method, f.param("cursor"))
	}
	return c
}

// expectNote reads the next frame of id, which must be method with the
// subscription id.
func expectNote(t *testing.T, w wire, id, method string) wireFrame {
	t.Helper()
	f := w.next(t, id)
	if f.Method != method || f.sub() != id {
		t.Fatalf("%s: want %s with subscription id %s, got %s %s %s (sub %q)", id, method, id, f.Method, f.Params, f.Result, f.sub())
	}
	return f
}

// expectEvent reads an event of id whose data is data; it returns its
// eventId and cursor.
func expectEvent(t *testing.T, w wire, id, name, data string) (string, string) {
	t.Helper()
	f := expectNote(t, w, id, eventsrv.NoteEvent)
	var eventID, ts string
	if f.param("name") != `"`+name+`"` || canonical(f.param("data")) != canonical(data) || json.Unmarshal([]byte(f.param("eventId")), &eventID) != nil ||
		json.Unmarshal([]byte(f.param("timestamp")), &ts) != nil {
		t.Fatalf("%s: event %s, want name %s and data %s", id, f.Params, name, data)
	}
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		t.Fatalf("%s: timestamp %q: %v", id, ts, err)
	}
	return eventID, cursorOf(t, f)
}

// expectRPCError reads the end of id, which must be a JSON-RPC error code.
func expectRPCError(t *testing.T, w wire, id string, code int) wireFrame {
	t.Helper()
	f := w.next(t, id)
	if f.Error == nil || f.Error.Code != code || compactJSON(f.ID) != id {
		t.Fatalf("%s: want JSON-RPC error %d, got %s %s %+v", id, code, f.Method, f.Result, f.Error)
	}
	w.ended(t, id)
	return f
}

// openStreams returns the subscription ids of the server's open streams.
func openStreams(t *testing.T, tool toolCall) []string {
	t.Helper()
	var r struct{ Streams []eventsrv.StreamInfo }
	if err := json.Unmarshal([]byte(tool(t, ToolEventsStreams, `{}`)), &r); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range r.Streams {
		ids = append(ids, s.Subscription)
	}
	return ids
}

// waitClosed waits until the server no longer lists stream id (aborting an
// HTTP request ends its handler asynchronously).
func waitClosed(t *testing.T, ctx context.Context, tool toolCall, id string) {
	t.Helper()
	for slices.Contains(openStreams(t, tool), id) {
		if ctx.Err() != nil {
			t.Fatalf("stream %s is still open", id)
		}
	}
}

// eventsArgs are the server flags the events scenarios need.
const eventsArgs = " --events --events-heartbeat-ms 0 --events-retention 5"

// eventsScenarios runs the events namespace through w at the wire level.
func eventsScenarios(t *testing.T, ctx context.Context, w wire, tool toolCall, modern bool) {
	env := func(params string) string { return withEnvelope(params, modern) }
	open := func(t *testing.T, id, params string) { w.request(t, id, eventsrv.MethodStream, env(params)) }
	emit := func(t *testing.T, name, data string) {
		tool(t, ToolEventsEmit, fmt.Sprintf(`{"name":%q,"data":%s}`, name, data))
	}
	fault := func(t *testing.T, id, args string) {
		t.Helper()
		out := tool(t, ToolEventsFault, `{"subscription":`+fmt.Sprintf("%q", id)+`,`+strings.TrimPrefix(args, "{"))
		if out != `{"streams":1}` {
			t.Fatalf("fault %s on %s: %s", args, id, out)
		}
	}
	var c3 string

	t.Run("catalog", func(t *testing.T) {
		w.request(t, `"list"`, eventsrv.MethodList, env(`{}`))
		f := w.next(t, `"list"`)
		var r struct {
			Events []eventsrv.Descriptor `json:"events"`
		}
		if err := json.Unmarshal(f.Result, &r); err != nil || len(r.Events) != 4 {
			t.Fatalf("events/list: %s %+v", f.Result, f.Error)
		}
		if r.Events[0].Name != EventTest || !slices.Equal(r.Events[0].Delivery, []string{"push"}) || !slices.Equal(r.Events[2].Delivery, []string{"poll"}) {
			t.Fatalf("events/list: %+v", r.Events)
		}
		w.ended(t, `"list"`)
	})
	t.Run("refusals", func(t *testing.T) {
		open(t, `"r1"`, `{"name":"nope","cursor":null}`)
		if f := expectRPCError(t, w, `"r1"`, eventsrv.CodeNotFound); compactJSON(f.Error.Data) != `{"kind":"event"}` {
			t.Fatalf("data %s", f.Error.Data)
		}
		open(t, `"r2"`, `{"name":"`+EventPollOnly+`"}`)
		expectRPCError(t, w, `"r2"`, eventsrv.CodeUnsupported)
		open(t, `"r3"`, `{"name":"`+EventTest+`","arguments":{"reject":true}}`)
		expectRPCError(t, w, `"r3"`, mcp.INVALID_PARAMS)
		open(t, `"r4"`, `{"name":"`+EventTest+`","cursor":"not-a-cursor"}`)
		expectRPCError(t, w, `"r4"`, mcp.INVALID_PARAMS)
	})
	t.Run("live, filtered, heartbeat", func(t *testing.T) {
		open(t, `"s1"`, `{"name":"`+EventTest+`","arguments":{"tag":"x"},"cursor":null}`)
		cursorOf(t, expectNote(t, w, `"s1"`, eventsrv.NoteActive))
		emit(t, EventTest, `{"tag":"x","n":1}`)
		emit(t, EventTest, `{"tag":"y","n":2}`)
		emit(t, EventTest, `{"tag":"x","n":3}`)
		id1, _ := expectEvent(t, w, `"s1"`, EventTest, `{"n":1,"tag":"x"}`)
		id3, c := expectEvent(t, w, `"s1"`, EventTest, `{"n":3,"tag":"x"}`)
		if id1 == id3 {
			t.Fatalf("two events with eventId %q", id1)
		}
		c3 = c
		fault(t, `"s1"`, `{"fault":"heartbeat"}`)
		if hb := cursorOf(t, expectNote(t, w, `"s1"`, eventsrv.NoteHeartbeat)); hb != c3 {
			t.Fatalf("heartbeat cursor %q, want the last event's %q", hb, c3)
		}
		emit(t, EventTest, `{"tag":"y","n":4}`)
		fault(t, `"s1"`, `{"fault":"heartbeat"}`)
		if hb := cursorOf(t, expectNote(t, w, `"s1"`, eventsrv.NoteHeartbeat)); hb == c3 {
			t.Fatal("the heartbeat cursor did not advance over a filtered occurrence")
		}
		w.cancel(t, `"s1"`)
		waitClosed(t, ctx, tool, `"s1"`)
	})
	t.Run("replay after the cursor", func(t *testing.T) {
		emit(t, EventTest, `{"tag":"x","n":5}`)
		open(t, `"s2"`, `{"name":"`+EventTest+`","arguments":{"tag":"x"},"cursor":"`+c3+`"}`)
		if c := cursorOf(t, expectNote(t, w, `"s2"`, eventsrv.NoteActive)); c != c3 {
			t.Fatalf("active cursor %q, want the client's %q", c, c3)
		}
		expectEvent(t, w, `"s2"`, EventTest, `{"n":5,"tag":"x"}`)
		emit(t, EventTest, `{"tag":"x","n":6}`)
		expectEvent(t, w, `"s2"`, EventTest, `{"n":6,"tag":"x"}`)
		w.cancel(t, `"s2"`)
		waitClosed(t, ctx, tool, `"s2"`)
	})
	t.Run("gap, duplicates and notifications", func(t *testing.T) {
		for n := 7; n <= 11; n++ { // retention 5 keeps 7..11; 4..6 go
			emit(t, EventTest, fmt.Sprintf(`{"tag":"x","n":%d}`, n))
		}
		open(t, `"s3"`, `{"name":"`+EventTest+`","cursor":"`+c3+`"}`)
		if c := cursorOf(t, expectNote(t, w, `"s3"`, eventsrv.NoteActive)); c != c3 {
			t.Fatalf("active cursor %q", c)
		}
		if f := expectNote(t, w, `"s3"`, eventsrv.NoteActive); f.param("truncated") != "true" || cursorOf(t, f) == c3 {
			t.Fatalf("second active %s: want truncated with a fresh cursor", f.Params)
		}
		var ids []string
		for n := 7; n <= 11; n++ {
			id, _ := expectEvent(t, w, `"s3"`, EventTest, fmt.Sprintf(`{"n":%d,"tag":"x"}`, n))
			ids = append(ids, id)
		}
		fault(t, `"s3"`, `{"fault":"duplicate","count":2}`)
		for i, n := range []int{10, 11} {
			if id, _ := expectEvent(t, w, `"s3"`, EventTest, fmt.Sprintf(`{"n":%d,"tag":"x"}`, n)); id != ids[3+i] {
				t.Fatalf("duplicate of n=%d has eventId %q, want %q", n, id, ids[3+i])
			}
		}
		fault(t, `"s3"`, `{"fault":"gap"}`)
		if f := expectNote(t, w, `"s3"`, eventsrv.NoteActive); f.param("truncated") != "true" {
			t.Fatalf("gap: %s", f.Params)
		}
		fault(t, `"s3"`, `{"fault":"error","code":-32001,"message":"upstream hiccup"}`)
		if f := expectNote(t, w, `"s3"`, eventsrv.NoteError); f.param("error") != `{"code":-32001,"message":"upstream hiccup","data":{"reason":"upstream_error"}}` {
			t.Fatalf("error: %s", f.Params)
		}
		fault(t, `"s3"`, `{"fault":"malformed","frame":"event_id_number"}`)
		if f := expectNote(t, w, `"s3"`, eventsrv.NoteEvent); f.param("eventId") != "42" {
			t.Fatalf("malformed: %s", f.Params)
		}
		fault(t, `"s3"`, `{"fault":"oversized","bytes":100}`)
		if f := expectNote(t, w, `"s3"`, eventsrv.NoteEvent); len(f.param("data")) != 102 {
			t.Fatalf("oversized: %d bytes of data", len(f.param("data")))
		}
		fault(t, `"s3"`, `{"fault":"terminate","code":-32012,"message":"revoked"}`)
		if f := expectNote(t, w, `"s3"`, eventsrv.NoteTerminated); f.param("error") != `{"code":-32012,"message":"revoked"}` {
			t.Fatalf("terminated: %s", f.Params)
		}
		w.cancel(t, `"s3"`)
		waitClosed(t, ctx, tool, `"s3"`)
	})
	t.Run("ends", func(t *testing.T) {
		open(t, `"e1"`, `{"name":"`+EventOther+`"}`)
		expectNote(t, w, `"e1"`, eventsrv.NoteActive)
		fault(t, `"e1"`, `{"fault":"end"}`)
		want := `{}`
		if modern {
			want = `{"resultType":"complete"}`
		}
		if f := w.next(t, `"e1"`); compactJSON(f.Result) != want {
			t.Fatalf("end: %s %+v, want %s", f.Result, f.Error, want)
		}
		w.ended(t, `"e1"`)

		open(t, `"e2"`, `{"name":"`+EventOther+`"}`)
		expectNote(t, w, `"e2"`, eventsrv.NoteActive)
		fault(t, `"e2"`, `{"fault":"rpc_error","code":-32012,"message":"forbidden","data":{"kind":"x"}}`)
		if f := expectRPCError(t, w, `"e2"`, -32012); compactJSON(f.Error.Data) != `{"kind":"x"}` {
			t.Fatalf("data %s", f.Error.Data)
		}

		open(t, `"e3"`, `{"name":"`+EventOther+`"}`)
		expectNote(t, w, `"e3"`, eventsrv.NoteActive)
		fault(t, `"e3"`, `{"fault":"cancel"}`)
		if f := w.next(t, `"e3"`); f.Method != "notifications/cancelled" || f.param("requestId") != `"e3"` {
			t.Fatalf("server cancel: %s %s", f.Method, f.Params)
		}

		open(t, `"e4"`, `{"name":"`+EventOther+`"}`)
		expectNote(t, w, `"e4"`, eventsrv.NoteActive)
		fault(t, `"e4"`, `{"fault":"drop"}`)
		w.ended(t, `"e4"`) // Streamable HTTP: the response ends; elsewhere silence
		if slices.Contains(openStreams(t, tool), `"e4"`) {
			t.Fatal("a dropped stream is still open")
		}
	})
	t.Run("armed", func(t *testing.T) {
		tool(t, ToolEventsArm, `{"fault":"rpc_error","code":-32013,"name":"`+EventOther+`"}`)
		open(t, `"a1"`, `{"name":"`+EventOther+`"}`)
		expectRPCError(t, w, `"a1"`, -32013)
		tool(t, ToolEventsArm, `{"fault":"drop","phase":"after_active"}`)
		open(t, `"a2"`, `{"name":"`+EventOther+`"}`)
		expectNote(t, w, `"a2"`, eventsrv.NoteActive)
		w.ended(t, `"a2"`)
	})
	t.Run("disconnect", func(t *testing.T) {
		open(t, `"d1"`, `{"name":"`+EventOther+`"}`)
		expectNote(t, w, `"d1"`, eventsrv.NoteActive)
		fault(t, `"d1"`, `{"fault":"disconnect"}`)
		if sw, ok := w.(*sharedWire); ok {
			for {
				select {
				case _, ok := <-sw.frames:
					if !ok {
						return // the connection is gone
					}
				case <-ctx.Done():
					t.Fatal("the connection outlived the disconnect")
				}
			}
		}
		w.ended(t, `"d1"`)
	})
}

func TestEventsStdio(t *testing.T) {
	for _, hs := range handshakes {
		t.Run(hs.name, func(t *testing.T) {
			ctx := testCtx(t)
			p := startProc(t, "--stdio"+eventsArgs+hs.args)
			w := lineWire(ctx, p.stdin, p.stdout)
			shake(t, w, hs.modern)
			eventsScenarios(t, ctx, w, sharedTool(w, hs.modern), hs.modern)
			select {
			case <-p.wait():
			case <-ctx.Done():
				t.Fatal("the stdio server did not exit after the disconnect")
			}
		})
	}
}

func TestEventsSocket(t *testing.T) {
	ctx := testCtx(t)
	w := socketWire(t, ctx, eventsArgs)
	shake(t, w, false)
	eventsScenarios(t, ctx, w, sharedTool(w, false), false)
}

func TestEventsLegacySSE(t *testing.T) {
	ctx := testCtx(t)
	url := listenURL(t, ctx, startProc(t, "--sse 127.0.0.1:0"+eventsArgs))
	w := sseWire(t, ctx, url)
	shake(t, w, false)
	eventsScenarios(t, ctx, w, sharedTool(w, false), false)
}

func TestEventsStreamableHTTP(t *testing.T) {
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprint("modern=", modern), func(t *testing.T) {
			ctx := testCtx(t)
			url := listenURL(t, ctx, startProc(t, "--http 127.0.0.1:0"+eventsArgs))
			w := &streamableWire{ctx: ctx, url: url, streams: map[string]*httpCall{}, headers: modernHeaders}
			if !modern {
				resp := httpPost(t, ctx, url, fmt.Sprintf(legacyInitialize, 1), nil)
				legacy := map[string]string{mcp.HeaderSessionID: resp.Header.Get(mcp.HeaderSessionID), mcp.HeaderProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION}
				httpPost(t, ctx, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacy)
				w.headers = func(string) map[string]string { return maps(legacy) }
			}
			eventsScenarios(t, ctx, w, httpTool(ctx, url, w.headers, modern), modern)
		})
	}
}

// maps copies a header map.
func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestEventsHeartbeat: heartbeats come by themselves at the configured
// interval, with the stream's cursor.
func TestEventsHeartbeat(t *testing.T) {
	ctx := testCtx(t)
	p := startProc(t, "--stdio --events-heartbeat-ms 20")
	w := lineWire(ctx, p.stdin, p.stdout)
	shake(t, w, false)
	w.request(t, `1`, eventsrv.MethodStream, `{"name":"`+EventOther+`","cursor":null}`)
	c := cursorOf(t, expectNote(t, w, `1`, eventsrv.NoteActive))
	for range 2 {
		if hb := cursorOf(t, expectNote(t, w, `1`, eventsrv.NoteHeartbeat)); hb != c {
			t.Fatalf("heartbeat cursor %q, want %q", hb, c)
		}
	}
}

// TestEventsStateAcrossRestart: with --events-state a new server process
// replays from a cursor the old one gave (what the demo's recovery needs).
func TestEventsStateAcrossRestart(t *testing.T) {
	ctx := testCtx(t)
	state := t.TempDir()
	args := "--stdio --events --events-heartbeat-ms 0 --events-state " + state
	p := startProc(t, args)
	w := lineWire(ctx, p.stdin, p.stdout)
	shake(t, w, false)
	tool := sharedTool(w, false)
	w.request(t, `1`, eventsrv.MethodStream, `{"name":"`+EventTest+`","cursor":null}`)
	expectNote(t, w, `1`, eventsrv.NoteActive)
	tool(t, ToolEventsEmit, `{"name":"`+EventTest+`","data":{"n":1}}`)
	id1, c1 := expectEvent(t, w, `1`, EventTest, `{"n":1}`)
	tool(t, ToolEventsEmit, `{"name":"`+EventTest+`","data":{"n":2}}`)
	id2, _ := expectEvent(t, w, `1`, EventTest, `{"n":2}`)
	tool(t, ToolEventsFault, `{"fault":"disconnect"}`)
	select {
	case <-p.wait():
	case <-ctx.Done():
		t.Fatal("the server did not exit after the disconnect")
	}

	p2 := startProc(t, args)
	w2 := lineWire(ctx, p2.stdin, p2.stdout)
	shake(t, w2, false)
	w2.request(t, `"again"`, eventsrv.MethodStream, `{"name":"`+EventTest+`","cursor":"`+c1+`"}`)
	if f := expectNote(t, w2, `"again"`, eventsrv.NoteActive); cursorOf(t, f) != c1 {
		t.Fatalf("active after the restart: %s", f.Params)
	}
	if id, _ := expectEvent(t, w2, `"again"`, EventTest, `{"n":2}`); id != id2 || id == id1 {
		t.Fatalf("replayed eventId %q, want %q", id, id2)
	}
}

// canonical re-encodes JSON with sorted keys.
func canonical(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
