package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// The protocol-extension matrix: the same stream scenarios over stdio,
// Streamable HTTP, legacy SSE and Unix sockets, with both handshake
// generations where the transport has them, against the test server's
// "example" namespace in a separate process. Cancellation is asserted on
// the wire through the server's logs.

var exampleDef = mcprt.Definition{
	Namespace:     "example",
	Requests:      []string{ts.MethodExampleList, ts.MethodExamplePoke},
	Streams:       []string{ts.MethodExampleStream},
	Notifications: []string{ts.NoteExampleActive, ts.NoteExampleItem, ts.NoteExampleListChanged},
}

// protoCase is one transport and handshake.
type protoCase struct {
	name   string
	args   string // test server mode and modifiers; "" for stdio
	http   bool   // Streamable HTTP: cancel aborts the response, no notification
	modern bool
}

func protoCases() []protoCase {
	return []protoCase{
		{name: "stdio"}, {name: "stdio-modern", args: "--modern-only", modern: true},
		{name: "socket", args: "--socket"}, {name: "socket-modern", args: "--socket --modern-only", modern: true},
		{name: "http", args: "--http", http: true}, {name: "http-modern", args: "--http --modern-only", http: true, modern: true},
		{name: "sse", args: "--sse"},
	}
}

// protoWorld is one runtime with one test server, "ex", and its logs.
type protoWorld struct {
	*rig
	c                 protoCase
	notes, reqs, cncl string
	proto             *mcprt.Protocol
}

func newProtoWorld(t *testing.T, c protoCase) *protoWorld {
	dir := t.TempDir()
	w := &protoWorld{c: c, notes: filepath.Join(dir, "notes"), reqs: filepath.Join(dir, "requests"), cncl: filepath.Join(dir, "cancels")}
	logs := []string{ts.EnvNoteLog + "=" + w.notes, ts.EnvRequestLog + "=" + w.reqs, ts.EnvCancelLog + "=" + w.cncl}
	var srv config.Server
	switch {
	case c.args == "" || c.args == "--modern-only":
		srv = config.Server{Command: testenv.Self(t), Env: testenv.TestServerEnv(c.args, logs...)}
	case strings.HasPrefix(c.args, "--socket"):
		path := filepath.Join(dir, "s.sock")
		testenv.StartTestServer(t, strings.Replace(c.args, "--socket", "--socket "+path, 1), logs...)
		srv = config.Server{Socket: path}
	default:
		mode, rest, _ := strings.Cut(c.args, " ")
		url, _ := testenv.StartTestServer(t, mode+" 127.0.0.1:0 "+rest, logs...)
		srv = config.Server{URL: url}
	}
	w.rig = newRig(t, map[string]config.Server{"ex": srv}, false)
	p, err := w.rt.RegisterProtocol(exampleDef)
	if err != nil {
		t.Fatal(err)
	}
	w.proto = p
	return w
}

func (w *protoWorld) connect(t *testing.T) *mcprt.Session {
	t.Helper()
	s, err := w.proto.Connect(w.ctx, "ex")
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return s
}

// frames records what a handler received.
type frames struct {
	mu   sync.Mutex
	got  []frame
	sig  signal
	fail func(n int) error // makes the handler fail on the n-th frame (from 1)
}

type frame struct {
	method string
	params json.RawMessage
}

func (f *frames) handle(method string, params json.RawMessage) error {
	f.mu.Lock()
	f.got = append(f.got, frame{method, params})
	n := len(f.got)
	f.mu.Unlock()
	f.sig.Notify()
	if f.fail != nil {
		return f.fail(n)
	}
	return nil
}

func (f *frames) wait(ctx context.Context, t *testing.T, n int) []frame {
	t.Helper()
	var out []frame
	until(ctx, t, &f.sig, fmt.Sprintf("%d frames", n), func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		out = append([]frame(nil), f.got...)
		return len(f.got) >= n
	})
	return out
}

func (f *frames) snapshot() []frame {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]frame(nil), f.got...)
}

// summary renders frames as "method n" lines (n from params, if any).
func summary(fs []frame) string {
	var b strings.Builder
	for _, f := range fs {
		var p struct {
			N *int `json:"n"`
		}
		_ = json.Unmarshal(f.params, &p)
		b.WriteString(strings.TrimPrefix(f.method, "notifications/example/"))
		if p.N != nil {
			fmt.Fprintf(&b, " %d", *p.N)
		}
		b.WriteString("; ")
	}
	return b.String()
}

// subscriptionID is the stream id a frame carries.
func subscriptionID(t *testing.T, f frame) string {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(f.params, &p); err != nil {
		t.Fatalf("frame params: %v", err)
	}
	var id string
	if err := json.Unmarshal(p.Meta[messages.SubscriptionIDKey], &id); err != nil {
		t.Fatalf("subscription id is not a string: %s", p.Meta[messages.SubscriptionIDKey])
	}
	return id
}

func streamParams(p ts.StreamParams) json.RawMessage {
	b, _ := json.Marshal(p)
	return b
}

func readLines(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func countLine(path, line string) int {
	n := 0
	for _, l := range readLines(path) {
		if l == line {
			n++
		}
	}
	return n
}

// waitEnd waits for a stream's end.
func waitEnd(ctx context.Context, t *testing.T, done <-chan struct{}, end func() mcprt.End, what string) mcprt.End {
	t.Helper()
	select {
	case <-done:
		return end()
	case <-ctx.Done():
		t.Fatalf("%s did not end", what)
		return mcprt.End{}
	}
}

func wantEnd(t *testing.T, what string, got mcprt.End, reason messages.EndReason) {
	t.Helper()
	if got.Reason != reason {
		t.Fatalf("%s ended %q (%s), want %q", what, got.Reason, got.Error, reason)
	}
}

func TestProtocolMatrix(t *testing.T) {
	for _, c := range protoCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newProtoWorld(t, c)
			s := w.connect(t)
			t.Run("request", w.scenarioRequest(s))
			t.Run("stream", w.scenarioStream(s))
			t.Run("cancel_siblings", w.scenarioCancel(s))
			t.Run("server_end", w.scenarioServerEnd(s))
			t.Run("error_end", w.scenarioErrorEnd(s))
			if c.http {
				t.Run("eof", w.scenarioEOF(s))
			}
			t.Run("handler_failure", w.scenarioHandlerFailure(s))
			t.Run("late_frames", w.scenarioLate(s))
			t.Run("observers", w.scenarioObservers(s))
			t.Run("undeclared", w.scenarioUndeclared(s))
			t.Run("connection_loss", w.scenarioLoss(s))
		})
	}
}

// request: a declared request returns its raw result; on 2026-07-28
// connections it carries the _meta envelope and, over HTTP, the Mcp-Method
// header.
func (w *protoWorld) scenarioRequest(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		res, err := s.Request(w.ctx, ts.MethodExampleList, json.RawMessage(`{"filter":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		if string(res) != `{"items":["a","b"]}` {
			t.Fatalf("example/list result %s", res)
		}
		recs, err := ts.ReadRequestLog(w.reqs)
		if err != nil {
			t.Fatal(err)
		}
		var rec *ts.RequestRecord
		for i := range recs {
			if recs[i].Method == ts.MethodExampleList {
				rec = &recs[i]
			}
		}
		if rec == nil {
			t.Fatal("the server did not log example/list")
		}
		meta := map[string]json.RawMessage{}
		_ = json.Unmarshal(rec.Meta, &meta)
		_, hasVersion := meta["io.modelcontextprotocol/protocolVersion"]
		if hasVersion != w.c.modern {
			t.Fatalf("modern=%v but the request's _meta is %s", w.c.modern, rec.Meta)
		}
		if w.c.modern {
			for _, k := range []string{"io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo"} {
				if _, ok := meta[k]; !ok {
					t.Fatalf("the request's _meta lacks %s: %s", k, rec.Meta)
				}
			}
		}
		if want := w.c.http && w.c.modern; (rec.MCPMethod == ts.MethodExampleList) != want {
			t.Fatalf("Mcp-Method header %q (want it set: %v)", rec.MCPMethod, want)
		}
	}
}

// stream: declared, correlated notifications reach the handler in order
// (the undeclared one does not), Sent is closed, the result ends it.
func (w *protoWorld) scenarioStream(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		var f frames
		st, err := s.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 3}), f.handle)
		if err != nil {
			t.Fatal(err)
		}
		end := waitEnd(w.ctx, t, st.Done(), st.Closed, "the stream")
		wantEnd(t, "the stream", end, messages.EndEnded)
		select {
		case <-st.Sent():
		default:
			t.Fatal("Sent is not closed after the stream ended with a result")
		}
		got := f.snapshot()
		if s := summary(got); s != "active; item 1; item 2; item 3; " {
			t.Fatalf("frames: %s", s)
		}
		id := subscriptionID(t, got[0])
		if !strings.HasPrefix(id, "mcprt-") {
			t.Fatalf("stream id %q is not one of the runtime's string ids", id)
		}
		for _, fr := range got[1:] {
			if subscriptionID(t, fr) != id {
				t.Fatal("frames of one stream carry different ids")
			}
		}
		w.noLeases(t)
	}
}

// cancel_siblings: cancelling one stream cancels it on the wire the
// transport's way, once, and its sibling and ordinary requests carry on.
func (w *protoWorld) scenarioCancel(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		var fa, fb frames
		a, err := s.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 1, End: ts.EndNever}), fa.handle)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 1, End: ts.EndNever}), fb.handle)
		if err != nil {
			t.Fatal(err)
		}
		idA := subscriptionID(t, fa.wait(w.ctx, t, 2)[0])
		idB := subscriptionID(t, fb.wait(w.ctx, t, 2)[0])
		if st := w.status(t); st.Leases < 2 {
			t.Fatalf("two open streams hold %d leases", st.Leases)
		}
		a.Cancel()
		wantEnd(t, "the cancelled stream", waitEnd(w.ctx, t, a.Done(), a.Closed, "the cancelled stream"), messages.EndCancelled)
		rawA, _ := json.Marshal(idA)
		poll(w.ctx, t, "the server sees the cancellation", func() bool { return countLine(w.cncl, ts.StreamCancelLine(rawA)) == 1 })
		if _, err := s.Request(w.ctx, ts.MethodExampleList, nil); err != nil {
			t.Fatalf("a request after a sibling's cancel: %v", err)
		}
		select {
		case <-b.Done():
			t.Fatalf("the sibling ended: %+v", b.Closed())
		default:
		}
		b.Cancel()
		wantEnd(t, "the sibling", waitEnd(w.ctx, t, b.Done(), b.Closed, "the sibling"), messages.EndCancelled)
		rawB, _ := json.Marshal(idB)
		poll(w.ctx, t, "the server sees the second cancellation", func() bool { return countLine(w.cncl, ts.StreamCancelLine(rawB)) == 1 })
		notes := strings.Join(readLines(w.notes), "\n")
		if w.c.http {
			if strings.Contains(notes, "notifications/cancelled") {
				t.Fatalf("Streamable HTTP sent notifications/cancelled:\n%s", notes)
			}
		} else {
			for _, raw := range []json.RawMessage{rawA, rawB} {
				if n := countLine(w.notes, ts.CancelNote(raw)); n != 1 {
					t.Fatalf("notifications/cancelled for %s sent %d times, want once:\n%s", raw, n, notes)
				}
			}
		}
		w.noLeases(t)
	}
}

// server_end: the server's notifications/cancelled for the stream ends it
// as ended.
func (w *protoWorld) scenarioServerEnd(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		var f frames
		st, _ := s.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 2, End: ts.EndCancel}), f.handle)
		end := waitEnd(w.ctx, t, st.Done(), st.Closed, "the stream")
		wantEnd(t, "the server-cancelled stream", end, messages.EndEnded)
		if s := summary(f.snapshot()); s != "active; item 1; item 2; " {
			t.Fatalf("frames: %s", s)
		}
		w.noLeases(t)
	}
}

// error_end: a JSON-RPC error keeps its code, message and data.
func (w *protoWorld) scenarioErrorEnd(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		var f frames
		st, _ := s.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 1, End: ts.EndError,
			ErrorCode: -32042, ErrorMessage: "no such item", ErrorData: json.RawMessage(`{"item":"x","retry":false}`)}), f.handle)
		end := waitEnd(w.ctx, t, st.Done(), st.Closed, "the stream")
		wantEnd(t, "the failed stream", end, messages.EndError)
		pe := end.ProtocolError
		if pe == nil || pe.Code != -32042 || pe.Message != "no such item" || string(pe.Data) != `{"item":"x","retry":false}` {
			t.Fatalf("protocol error %+v (end %+v)", pe, end)
		}
		if !strings.Contains(end.Error, "no such item") {
			t.Fatalf("end.Error %q", end.Error)
		}
	}
}

// eof (Streamable HTTP): a response stream that ends without a result
// ends the stream as disconnected; the session stays usable.
func (w *protoWorld) scenarioEOF(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		var f frames
		st, _ := s.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 1, End: ts.EndEOF}), f.handle)
		wantEnd(t, "the stream whose response ended", waitEnd(w.ctx, t, st.Done(), st.Closed, "the stream"), messages.EndDisconnected)
		select {
		case <-s.Done():
			t.Fatalf("the session ended with the stream's response: %s", s.Why())
		default:
		}
		if _, err := s.Request(w.ctx, ts.MethodExampleList, nil); err != nil {
			t.Fatalf("the session after a response EOF: %v", err)
		}
		w.noLeases(t)
	}
}

// handler_failure: a handler that fails (error or panic) ends its own
// stream only, as error, and cancels it on the wire.
func (w *protoWorld) scenarioHandlerFailure(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		var sib frames
		sibling, _ := s.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 1, End: ts.EndNever}), sib.handle)
		sib.wait(w.ctx, t, 2)
		for _, how := range []string{"error", "panic"} {
			f := frames{fail: func(n int) error {
				if n < 2 {
					return nil
				}
				if how == "panic" {
					panic("the consumer broke")
				}
				return errors.New("the consumer refused the item")
			}}
			st, _ := s.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 1, End: ts.EndNever}), f.handle)
			end := waitEnd(w.ctx, t, st.Done(), st.Closed, "the failing stream")
			wantEnd(t, how+" handler", end, messages.EndError)
			if !strings.Contains(end.Error, "protocol handler failed") {
				t.Fatalf("%s: end.Error %q", how, end.Error)
			}
			raw, _ := json.Marshal(subscriptionID(t, f.snapshot()[0]))
			poll(w.ctx, t, "the server sees the failed stream cancelled", func() bool { return countLine(w.cncl, ts.StreamCancelLine(raw)) == 1 })
		}
		select {
		case <-sibling.Done():
			t.Fatalf("a sibling ended with a failing handler: %+v", sibling.Closed())
		default:
		}
		sibling.Cancel()
		sibling.Closed()
		w.noLeases(t)
	}
}

// late_frames: frames after the end are dropped and counted.
func (w *protoWorld) scenarioLate(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		before := w.status(t).LateFrames
		var f frames
		st, _ := s.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 2, Late: 3}), f.handle)
		wantEnd(t, "the stream", waitEnd(w.ctx, t, st.Done(), st.Closed, "the stream"), messages.EndEnded)
		if w.c.http {
			// Streamable HTTP: the late frames follow the result on the
			// request's own response, which the client stops reading at
			// the result; they never arrive.
			if _, err := s.Request(w.ctx, ts.MethodExampleList, nil); err != nil {
				t.Fatal(err)
			}
		} else {
			poll(w.ctx, t, "three late frames counted", func() bool { return w.status(t).LateFrames >= before+3 })
			if got := w.status(t).LateFrames - before; got != 3 {
				t.Fatalf("late frames counted %d, want 3 (before %d)", got, before)
			}
		}
		if s := summary(f.snapshot()); s != "active; item 1; item 2; " {
			t.Fatalf("frames (late ones must be dropped): %s", s)
		}
	}
}

// observers: watched notifications outside streams reach every observer
// (params copied) and still get normal handling; a failing observer
// closes only itself; observers hold leases.
func (w *protoWorld) scenarioObservers(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		var good, bad frames
		bad.fail = func(int) error { return errors.New("the observer broke") }
		o1, err := s.WatchNotifications([]string{ts.NoteExampleListChanged}, good.handle)
		if err != nil {
			t.Fatal(err)
		}
		o2, _ := s.WatchNotifications([]string{ts.NoteExampleListChanged}, bad.handle)
		poll(w.ctx, t, "observers hold leases", func() bool { return w.status(t).Leases == 2 })
		if _, err := s.Request(w.ctx, ts.MethodExamplePoke, nil); err != nil {
			t.Fatal(err)
		}
		good.wait(w.ctx, t, 1)
		end := waitEnd(w.ctx, t, o2.Done(), o2.Closed, "the failing observer")
		wantEnd(t, "the failing observer", end, messages.EndError)
		if _, err := s.Request(w.ctx, ts.MethodExamplePoke, nil); err != nil {
			t.Fatal(err)
		}
		got := good.wait(w.ctx, t, 2)
		if got[0].method != ts.NoteExampleListChanged {
			t.Fatalf("observer got %s", got[0].method)
		}
		if n := len(bad.snapshot()); n != 1 {
			t.Fatalf("the failed observer got %d frames, want 1", n)
		}
		o1.Close()
		wantEnd(t, "the closed observer", waitEnd(w.ctx, t, o1.Done(), o1.Closed, "the observer"), messages.EndCancelled)
		w.noLeases(t)
	}
}

// undeclared: undeclared methods and reserved _meta keys are refused
// before anything is sent.
func (w *protoWorld) scenarioUndeclared(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		before, _ := ts.ReadRequestLog(w.reqs)
		checks := map[string]error{}
		_, checks["stream method as a request"] = s.Request(w.ctx, ts.MethodExampleStream, nil)
		_, checks["unknown request"] = s.Request(w.ctx, "example/nope", nil)
		_, checks["core method"] = s.Request(w.ctx, "tools/list", nil)
		_, checks["request as a stream"] = s.OpenStream(ts.MethodExampleList, nil, nil)
		_, checks["undeclared notification"] = s.WatchNotifications([]string{ts.NoteExampleUndeclared}, nil)
		_, checks["reserved _meta key"] = s.Request(w.ctx, ts.MethodExampleList, json.RawMessage(`{"_meta":{"io.modelcontextprotocol/subscriptionId":"x"}}`))
		_, checks["progress token"] = s.OpenStream(ts.MethodExampleStream, json.RawMessage(`{"_meta":{"progressToken":1}}`), nil)
		for what, err := range checks {
			if messages.KindOf(err) != messages.KindInvalidArgs {
				t.Errorf("%s: got %v, want invalid_args", what, err)
			}
		}
		after, _ := ts.ReadRequestLog(w.reqs)
		if len(after) != len(before) {
			t.Fatalf("refused calls reached the server: %d requests before, %d after", len(before), len(after))
		}
	}
}

// connection_loss: when the connection ends, the session's Done closes,
// its streams and observers end disconnected, nothing carries over, and a
// new Connect works where the server can come back (stdio).
func (w *protoWorld) scenarioLoss(s *mcprt.Session) func(*testing.T) {
	return func(t *testing.T) {
		var f, o frames
		st, _ := s.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 1, End: ts.EndNever}), f.handle)
		obs, _ := s.WatchNotifications([]string{ts.NoteExampleListChanged}, o.handle)
		f.wait(w.ctx, t, 2)
		crash := w.exec(w.ctx, `{"tool":"crash","server":"ex"}`)
		if !crash.IsError {
			t.Fatalf("crash answered: %s", crash.Text)
		}
		wantEnd(t, "the stream", waitEnd(w.ctx, t, st.Done(), st.Closed, "the stream"), messages.EndDisconnected)
		wantEnd(t, "the observer", waitEnd(w.ctx, t, obs.Done(), obs.Closed, "the observer"), messages.EndDisconnected)
		select {
		case <-s.Done():
		case <-w.ctx.Done():
			t.Fatal("the session's Done did not close")
		}
		if _, err := s.Request(w.ctx, ts.MethodExampleList, nil); messages.KindOf(err) != messages.KindDisconnected {
			t.Fatalf("a request on an ended session: %v", err)
		}
		if w.c.args == "" || w.c.args == "--modern-only" {
			s2 := w.connect(t)
			if _, err := s2.Request(w.ctx, ts.MethodExampleList, nil); err != nil {
				t.Fatalf("a new session after reconnecting: %v", err)
			}
			s2.Close()
		}
	}
}

func (w *protoWorld) status(t *testing.T) messages.ServerStatus {
	t.Helper()
	for _, st := range w.rt.ServerStatuses() {
		if st.Name == "ex" {
			return st
		}
	}
	t.Fatal("no status for ex")
	return messages.ServerStatus{}
}

// noLeases waits until nothing holds the connection.
func (w *protoWorld) noLeases(t *testing.T) {
	t.Helper()
	poll(w.ctx, t, "leases back to zero", func() bool { return w.status(t).Leases == 0 })
}
