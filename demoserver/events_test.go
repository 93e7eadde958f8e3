package demoserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/eventsrv"
	"github.com/mcprt/mcprt/internal/mcpline"
)

// frame is one JSON-RPC message from the server.
type frame struct {
	ID     json.RawMessage            `json:"id"`
	Method string                     `json:"method"`
	Params map[string]json.RawMessage `json:"params"`
	Result json.RawMessage            `json:"result"`
	Error  *struct{ Code int }        `json:"error"`
}

func (f frame) str(key string) string {
	var s string
	_ = json.Unmarshal(f.Params[key], &s)
	return s
}

func (f frame) sub() string {
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(f.Params["_meta"], &meta)
	return string(meta[mcpline.SubscriptionIDKey])
}

// lineClient talks raw JSON-RPC lines to ServeStdio over pipes.
type lineClient struct {
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func startLines(t *testing.T, opts Options) *lineClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &lineClient{in: inW, lines: make(chan string, 256), done: make(chan error, 1)}
	go func() {
		c.done <- ServeStdio(context.Background(), inR, outW, opts)
		_ = outW.Close()
	}()
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { _ = inW.Close() })
	c.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	c.next(t)
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *lineClient) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (c *lineClient) next(t *testing.T) frame {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatal("the server's output ended")
		}
		var f frame
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		return f
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for a line")
		return frame{}
	}
}

// expectFrame reads the next frame, which must be method for subscription
// id sub.
func expectFrame(t *testing.T, f frame, method, sub string) frame {
	t.Helper()
	if f.Method != method || f.sub() != sub {
		t.Fatalf("got %s %v (sub %s), want %s for %s", f.Method, f.Params, f.sub(), method, sub)
	}
	return f
}

// expectChange checks an fs.changed event and returns its cursor.
func expectChange(t *testing.T, f frame, sub, path, change string) string {
	t.Helper()
	expectFrame(t, f, eventsrv.NoteEvent, sub)
	var d fsChange
	if err := json.Unmarshal(f.Params["data"], &d); err != nil || d.Path != path || d.Change != change || f.str("name") != EventFSChanged || f.str("eventId") == "" {
		t.Fatalf("event %v, want %s %s", f.Params, change, path)
	}
	return f.str("cursor")
}

func writeFile(t *testing.T, root, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), []byte(name), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEventsStdioRecovery is the demo's story on the wire: a stream of
// fs.changed, a disconnect that ends the server, a change while it is
// down, and a new server process (the same state directory) that replays
// from the cursor: nothing lost, nothing repeated.
func TestEventsStdioRecovery(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	clk := clock.NewManual(time.Time{})
	opts := Options{Root: root, StateDir: state, Clock: clk, Heartbeat: -1}
	c := startLines(t, opts)
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"events/list"}`)
	var list struct{ Events []eventsrv.Descriptor }
	if f := c.next(t); json.Unmarshal(f.Result, &list) != nil || len(list.Events) != 2 ||
		list.Events[0].Name != EventFSChanged || list.Events[1].Name != EventClockTick {
		t.Fatalf("events/list: %s", f.Result)
	}
	c.send(t, `{"jsonrpc":"2.0","id":"s1","method":"events/stream","params":{"name":"fs.changed","arguments":{"glob":"*.txt"},"cursor":null}}`)
	expectFrame(t, c.next(t), eventsrv.NoteActive, `"s1"`)
	writeFile(t, root, "a.txt")
	writeFile(t, root, "note.md")
	clk.Advance(DefaultPoll)
	c1 := expectChange(t, c.next(t), `"s1"`, "a.txt", "created")

	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo_fault","arguments":{"fault":"disconnect"}}}`)
	if f := c.next(t); string(f.ID) != "2" || !strings.Contains(string(f.Result), `{\"streams\":1}`) {
		t.Fatalf("demo_fault: %s", f.Result)
	}
	if l, ok := <-c.lines; ok {
		t.Fatalf("after the disconnect: %s", l)
	}
	if err := <-c.done; err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}

	writeFile(t, root, "b.txt") // while no server runs
	c = startLines(t, opts)
	c.send(t, `{"jsonrpc":"2.0","id":"s2","method":"events/stream","params":{"name":"fs.changed","arguments":{"glob":"*.txt"},"cursor":"`+c1+`"}}`)
	if f := expectFrame(t, c.next(t), eventsrv.NoteActive, `"s2"`); f.str("cursor") != c1 {
		t.Fatalf("active %v, want the client's cursor", f.Params)
	}
	expectChange(t, c.next(t), `"s2"`, "b.txt", "created")
	writeFile(t, root, "c.txt")
	clk.Advance(DefaultPoll)
	expectChange(t, c.next(t), `"s2"`, "c.txt", "created")

	for _, tc := range []struct{ fault, method string }{
		{"gap", eventsrv.NoteActive}, {"error", eventsrv.NoteError}, {"terminate", eventsrv.NoteTerminated},
	} {
		c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s","method":"tools/call","params":{"name":"demo_fault","arguments":{"fault":%q}}}`, tc.fault, tc.fault))
		f := expectFrame(t, c.next(t), tc.method, `"s2"`)
		if tc.fault == "gap" && string(f.Params["truncated"]) != "true" {
			t.Fatalf("gap: %v", f.Params)
		}
		c.next(t) // the tool's result
	}
	c.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo_fault","arguments":{"fault":"end"}}}`)
	if f := c.next(t); !strings.Contains(string(f.Result), "fault must be one of") {
		t.Fatalf("a fault demo_fault does not offer: %s", f.Result)
	}
}

// TestEventsHTTP: clock.tick over Streamable HTTP, then a disconnect ends
// the stream's response.
func TestEventsHTTP(t *testing.T) {
	ctx := testCtx(t)
	clk := clock.NewManual(time.Time{})
	url := startHTTP(t, Options{Root: t.TempDir(), Clock: clk, Heartbeat: -1})
	post := func(ctx context.Context, body string, headers map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	init := post(ctx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, nil)
	session := map[string]string{mcp.HeaderSessionID: init.Header.Get(mcp.HeaderSessionID)}
	resp := post(ctx, `{"jsonrpc":"2.0","id":"tick","method":"events/stream","params":{"name":"clock.tick","arguments":{"seconds":2}}}`, session)
	body := bufio.NewReader(resp.Body)
	next := func() (frame, error) {
		for {
			line, err := body.ReadString('\n')
			if err != nil {
				return frame{}, err
			}
			if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:"); ok {
				var f frame
				return f, json.Unmarshal([]byte(strings.TrimSpace(data)), &f)
			}
		}
	}
	f, err := next()
	if err != nil {
		t.Fatal(err)
	}
	expectFrame(t, f, eventsrv.NoteActive, `"tick"`)
	clk.Advance(3 * time.Second)
	if f, err = next(); err != nil {
		t.Fatal(err)
	}
	expectFrame(t, f, eventsrv.NoteEvent, `"tick"`)
	if string(f.Params["data"]) != fmt.Sprintf(`{"time":"2026-01-01T00:00:02Z","unix":%d}`, clock.Epoch.Unix()+2) {
		t.Fatalf("tick %s", f.Params["data"])
	}
	tool := post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo_fault","arguments":{"fault":"disconnect","name":"clock.tick"}}}`, session)
	if b, _ := io.ReadAll(tool.Body); !strings.Contains(string(b), `{\"streams\":1}`) {
		t.Fatalf("demo_fault: %s", b)
	}
	if f, err := next(); err != io.EOF {
		t.Fatalf("after the disconnect: %+v %v", f, err)
	}
}
