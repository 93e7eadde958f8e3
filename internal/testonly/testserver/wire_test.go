package testserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// wireFrame is one JSON-RPC message from the server, as raw as the tests
// need it.
type wireFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decodeFrame(t *testing.T, b []byte) wireFrame {
	t.Helper()
	var f wireFrame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return f
}

// param returns params[name] as compact JSON, or "".
func (f wireFrame) param(name string) string {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(f.Params, &p)
	if v, ok := p[name]; ok {
		return compactJSON(v)
	}
	return ""
}

// sub returns params._meta's subscription id as compact JSON, or "".
func (f wireFrame) sub() string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(f.Params, &p)
	if v, ok := p.Meta[mcpline.SubscriptionIDKey]; ok {
		return compactJSON(v)
	}
	return ""
}

// owner is the request a frame belongs to (compact JSON id), or "" for an
// unsolicited notification.
func (f wireFrame) owner() string {
	switch {
	case len(f.ID) > 0:
		return compactJSON(f.ID)
	case f.Method == mcpline.CancelledMethod:
		return f.param("requestId")
	}
	return f.sub()
}

// wire is a raw client of one transport. Ids are compact JSON.
type wire interface {
	// request sends a request; params already hold any _meta envelope.
	request(t *testing.T, id, method, params string)
	// next returns the next frame of request id (or an unsolicited one).
	next(t *testing.T, id string) wireFrame
	// ended checks that nothing more comes for id: on Streamable HTTP the
	// response stream ends; elsewhere there is nothing to check.
	ended(t *testing.T, id string)
	// cancel cancels request id the transport's way.
	cancel(t *testing.T, id string)
	// perRequest reports whether each request has its own response stream.
	perRequest() bool
}

// sharedWire is a wire whose frames all arrive on one channel (stdio,
// socket, the legacy SSE GET stream); next demultiplexes them.
type sharedWire struct {
	ctx    context.Context
	frames chan []byte
	write  func(t *testing.T, msg string)
	held   []wireFrame
}

func (w *sharedWire) request(t *testing.T, id, method, params string) {
	t.Helper()
	w.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
}

func (w *sharedWire) next(t *testing.T, id string) wireFrame {
	t.Helper()
	for i, f := range w.held {
		if o := f.owner(); o == id || o == "" {
			w.held = append(w.held[:i:i], w.held[i+1:]...)
			return f
		}
	}
	for {
		select {
		case b, ok := <-w.frames:
			if !ok {
				t.Fatal("the server's stream ended")
			}
			f := decodeFrame(t, b)
			if o := f.owner(); o == id || o == "" {
				return f
			}
			w.held = append(w.held, f)
		case <-w.ctx.Done():
			t.Fatalf("timed out waiting for a frame of %s (holding %d others)", id, len(w.held))
		}
	}
}

func (w *sharedWire) ended(*testing.T, string) {}

func (w *sharedWire) cancel(t *testing.T, id string) {
	t.Helper()
	w.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"test"}}`, id))
}

func (w *sharedWire) perRequest() bool { return false }

// readLinesInto feeds every line of r to frames, then closes it.
func readLinesInto(r io.Reader, frames chan<- []byte) {
	defer close(frames)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, mcpline.MaxLine)
	for sc.Scan() {
		frames <- bytes.Clone(sc.Bytes())
	}
}

// lineWire speaks to a stdio or socket server.
func lineWire(ctx context.Context, in io.Writer, out io.Reader) *sharedWire {
	w := &sharedWire{ctx: ctx, frames: make(chan []byte, 256)}
	var mu sync.Mutex
	w.write = func(t *testing.T, msg string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if _, err := io.WriteString(in, msg+"\n"); err != nil {
			t.Fatalf("write %s: %v", msg, err)
		}
	}
	go readLinesInto(out, w.frames)
	return w
}

// sseEvents reads SSE events from a body.
type sseEvents struct{ r *bufio.Reader }

// next returns the next event; io.EOF at a clean end between events.
func (s *sseEvents) next() (event, data string, err error) {
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && (event != "" || data != "") {
				err = io.ErrUnexpectedEOF
			}
			return event, data, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if event != "" || data != "" {
				return event, data, nil
			}
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimSpace(line[len("data:"):])
		}
	}
}

// httpPost POSTs body with the standard headers plus extra.
func httpPost(t *testing.T, ctx context.Context, url, body string, extra map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// sseWire speaks legacy HTTP+SSE: a GET stream and POSTed messages.
func sseWire(t *testing.T, ctx context.Context, url string) *sharedWire {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	events := &sseEvents{r: bufio.NewReader(resp.Body)}
	ev, endpoint, err := events.next()
	if err != nil || ev != "endpoint" || !strings.HasPrefix(endpoint, "/message?sessionId=") {
		t.Fatalf("first event %q %q: %v", ev, endpoint, err)
	}
	target := strings.TrimSuffix(url, "/mcp") + endpoint
	w := &sharedWire{ctx: ctx, frames: make(chan []byte, 256)}
	w.write = func(t *testing.T, msg string) {
		t.Helper()
		resp := httpPost(t, ctx, target, msg, map[string]string{"X-Test": "legacy-sse"})
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: status %d", msg, resp.StatusCode)
		}
	}
	go func() {
		defer close(w.frames)
		for {
			ev, data, err := events.next()
			if err != nil {
				return
			}
			if ev == "message" {
				w.frames <- []byte(data)
			}
		}
	}()
	return w
}

// streamableWire speaks Streamable HTTP: one POST, and one response, per
// request.
type streamableWire struct {
	ctx     context.Context
	url     string
	headers func(method string) map[string]string
	streams map[string]*httpCall
}

type httpCall struct {
	events *sseEvents
	abort  context.CancelFunc
}

func (w *streamableWire) request(t *testing.T, id, method, params string) {
	t.Helper()
	ctx, abort := context.WithCancel(w.ctx)
	t.Cleanup(abort)
	resp := httpPost(t, ctx, w.url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params), w.headers(method))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: status %d, %s: %s", method, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	w.streams[id] = &httpCall{events: &sseEvents{r: bufio.NewReader(resp.Body)}, abort: abort}
}

func (w *streamableWire) next(t *testing.T, id string) wireFrame {
	t.Helper()
	ev, data, err := w.streams[id].events.next()
	if err != nil || ev != "message" {
		t.Fatalf("response of %s: event %q %q: %v", id, ev, data, err)
	}
	return decodeFrame(t, []byte(data))
}

func (w *streamableWire) ended(t *testing.T, id string) {
	t.Helper()
	if ev, data, err := w.streams[id].events.next(); err != io.EOF {
		t.Fatalf("response of %s goes on: event %q %q: %v", id, ev, data, err)
	}
}

func (w *streamableWire) cancel(_ *testing.T, id string) { w.streams[id].abort() }

func (w *streamableWire) perRequest() bool { return true }

// logs are the files the server records what it receives in.
type logs struct{ cancel, note, request string }

func newLogs(t *testing.T) (logs, []string) {
	dir := t.TempDir()
	l := logs{filepath.Join(dir, "cancel.log"), filepath.Join(dir, "note.log"), filepath.Join(dir, "request.log")}
	return l, []string{EnvCancelLog + "=" + l.cancel, EnvNoteLog + "=" + l.note, EnvRequestLog + "=" + l.request}
}

func fileHasLine(path, line string) bool {
	b, _ := os.ReadFile(path)
	for _, l := range strings.Split(string(b), "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// waitLine polls path until it holds line (the server logs asynchronously
// when the client aborts an HTTP request).
func waitLine(t *testing.T, ctx context.Context, path, line string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !fileHasLine(path, line) {
		select {
		case <-tick.C:
		case <-ctx.Done():
			b, _ := os.ReadFile(path)
			t.Fatalf("%s never got %q; it holds %q", path, line, b)
		}
	}
}

// modernEnvelope is the _meta a 2026-07-28 client puts on every request.
const modernEnvelope = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}`

// withEnvelope adds the modern _meta envelope to a params object.
func withEnvelope(params string, modern bool) string {
	if !modern {
		return params
	}
	if strings.TrimSpace(params) == "{}" {
		return `{"_meta":` + modernEnvelope + `}`
	}
	return `{"_meta":` + modernEnvelope + `,` + strings.TrimPrefix(strings.TrimSpace(params), "{")
}

// modernHeaders returns the headers of a 2026-07-28 POST.
func modernHeaders(method string) map[string]string {
	return map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: method, mcp.HeaderName: "probe-name"}
}
