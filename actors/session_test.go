package actors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

var exampleNotes = []string{testserver.NoteExampleActive, testserver.NoteExampleItem, testserver.NoteExampleListChanged}

func (r *rig) bind(server string) *Session {
	r.t.Helper()
	h, err := r.sys.Bind(r.ctx, server, messages.OriginModel, exampleNotes)
	if err != nil {
		r.t.Fatalf("Bind %s: %v", server, err)
	}
	return h
}

// counter counts a handler's frames.
type counter struct {
	mu  sync.Mutex
	n   int
	sig signal
}

func (c *counter) handle(string, json.RawMessage) error {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	c.sig.Notify()
	return nil
}

func (c *counter) wait(r *rig, n int) {
	r.t.Helper()
	until(r.ctx, r.t, &c.sig, "frames", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.n >= n
	})
}

func endOf(r *rig, st *Stream) messages.End {
	r.t.Helper()
	select {
	case <-st.Done():
		return st.End()
	case <-r.ctx.Done():
		r.t.Fatal("the stream did not end")
		return messages.End{}
	}
}

// Streams and observers hold leases on their exact generation, so idle
// cleanup waits for them; when the connection then ends, the session's
// Done closes, and nothing carries over to the next connection.
func TestSessionLeasesHoldIdleCloseAndNothingCarriesOver(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{withPolicy(stdio(t, "ex", ""), supervisor.Policy{Mode: supervisor.Lazy, IdleTimeout: time.Minute})})
	h := r.bind("ex")
	if h.Gen() != 1 {
		t.Fatalf("bound to generation %d", h.Gen())
	}
	var c counter
	st := h.OpenStream(testserver.MethodExampleStream, json.RawMessage(`{"count":1,"end":"never"}`), c.handle)
	obs := h.Watch([]string{testserver.NoteExampleListChanged}, c.handle)
	c.wait(r, 2)
	if l := r.status("ex").Leases; l != 2 {
		t.Fatalf("a stream and an observer hold %d leases", l)
	}
	r.clk.Advance(3 * time.Minute)
	r.wantState("ex", messages.StateConnected)

	st.Cancel()
	obs.Cancel()
	if e := endOf(r, st); e.Reason != messages.EndCancelled {
		t.Fatalf("stream end %+v", e)
	}
	if e := endOf(r, obs); e.Reason != messages.EndCancelled {
		t.Fatalf("observer end %+v", e)
	}
	poll(r.ctx, t, "leases returned", func() bool { return r.status("ex").Leases == 0 })
	select {
	case <-h.Done():
		t.Fatal("the session ended while its connection was up")
	default:
	}
	r.clk.Advance(time.Minute)
	r.dialer.WaitClosed(r.ctx, t, "ex", 1)
	select {
	case <-h.Done():
	case <-r.ctx.Done():
		t.Fatal("Done did not close when the connection ended")
	}
	if h.Why() == "" {
		t.Fatal("Done closed without a reason")
	}
	if rep := h.Request(r.ctx, testserver.MethodExampleList, nil); rep.Err == nil || rep.Err.Kind != messages.KindDisconnected {
		t.Fatalf("a request on the ended session: %+v", rep)
	}
	late := h.OpenStream(testserver.MethodExampleStream, nil, c.handle)
	if e := endOf(r, late); e.Reason != messages.EndDisconnected {
		t.Fatalf("a stream opened on the ended session: %+v", e)
	}
	if n := r.dialer.DialCount("ex"); n != 1 {
		t.Fatalf("the ended session connected again (%d dials)", n)
	}
	if h2 := r.bind("ex"); h2.Gen() != 2 {
		t.Fatalf("a new session is bound to generation %d", h2.Gen())
	}
}

// A stream cancelled before its request was written sends nothing: no
// request, no cancellation.
func TestStreamCancelledBeforeWrittenSendsNothing(t *testing.T) {
	t.Parallel()
	notes := filepath.Join(t.TempDir(), "notes")
	r := newRig(t, []ServerConfig{stdio(t, "ex", "", testserver.EnvNoteLog+"="+notes)})
	h := r.bind("ex")
	st := newStream(r.sys, "ex")
	st.Cancel() // before its actor exists
	h.post(sessOpen{stream: st, method: testserver.MethodExampleStream, handler: nil, methods: exampleNotes}, st.refused)
	if e := endOf(r, st); e.Reason != messages.EndCancelled {
		t.Fatalf("end %+v", e)
	}
	select {
	case <-st.Sent():
		t.Fatal("Sent closed for a stream never written")
	default:
	}
	if rep := h.Request(r.ctx, testserver.MethodExampleList, nil); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if n := r.dialer.SentCount("ex " + testserver.MethodExampleStream); n != 0 {
		t.Fatalf("the cancelled stream was sent %d times", n)
	}
	if b := readFile(notes); strings.Contains(b, "notifications/cancelled") {
		t.Fatalf("a cancellation was sent:\n%s", b)
	}
	poll(r.ctx, t, "no leases", func() bool { return r.status("ex").Leases == 0 })
}

// Closing a session cancels its work and leaves the shared connection up.
func TestSessionCloseKeepsTheConnection(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{stdio(t, "ex", "")})
	h := r.bind("ex")
	var c counter
	st := h.OpenStream(testserver.MethodExampleStream, json.RawMessage(`{"count":1,"end":"never"}`), c.handle)
	c.wait(r, 2)
	h.Close()
	if e := endOf(r, st); e.Reason != messages.EndCancelled {
		t.Fatalf("stream end %+v", e)
	}
	poll(r.ctx, t, "no leases", func() bool { return r.status("ex").Leases == 0 })
	if st := r.wantState("ex", messages.StateConnected); st.Generation != 1 {
		t.Fatalf("generation %d after a session closed", st.Generation)
	}
	if h2 := r.bind("ex"); h2.Gen() != 1 {
		t.Fatalf("a second session got generation %d", h2.Gen())
	}
	if rep := h.Request(r.ctx, testserver.MethodExampleList, nil); rep.Err == nil {
		t.Fatal("a closed session still sends requests")
	}
}

// Bind goes through the configuration and the lifecycle: unknown and
// disabled servers are refused, and a failed connect is remembered.
func TestBindFollowsTheLifecycle(t *testing.T) {
	t.Parallel()
	broken := stdio(t, "broken", "")
	broken.Endpoint.Command = filepath.Join(t.TempDir(), "no-such-server")
	off := stdio(t, "off", "")
	off.Policy.Disabled = true
	r := newRig(t, []ServerConfig{broken, off})
	for server, kind := range map[string]messages.ErrorKind{"nope": messages.KindServerNotFound, "off": messages.KindServerDisabled, "broken": messages.KindConnectFailed} {
		if _, err := r.sys.Bind(r.ctx, server, messages.OriginModel, nil); err == nil || err.Kind != kind {
			t.Fatalf("Bind %s: %v, want %s", server, err, kind.Code())
		}
	}
	if _, err := r.sys.Bind(r.ctx, "broken", messages.OriginModel, nil); err == nil || err.Kind != messages.KindServerBackoff {
		t.Fatalf("Bind after a failed connect: %v, want server_backoff", err)
	}
	if n := r.dialer.DialCount("broken"); n != 1 {
		t.Fatalf("failure memory let %d dials through", n)
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// A session the server no longer knows refuses its work as not sent and
// closes Done, so a holder that kept the handle knows to bind again before
// it retries (the server can learn that a connection ended before the
// session's actor does, and refuse in between).
func TestRefusedWorkIsNotSentAndEndsTheHandle(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{stdio(t, "ex", "")})
	r.bind("ex") // connected
	stale := newSessionHandle(r.sys, "ex", exampleNotes)
	select {
	case <-stale.Done():
		t.Fatal("Done closed before anything was refused")
	default:
	}
	rep := stale.Request(r.ctx, testserver.MethodExampleList, nil)
	if rep.Err == nil || rep.Err.Kind != messages.KindDisconnected || !rep.NotSent {
		t.Fatalf("a request on a session the server does not know: %+v", rep)
	}
	select {
	case <-stale.Done():
	default:
		t.Fatal("a refused request left Done open")
	}
	if e := endOf(r, stale.OpenStream(testserver.MethodExampleStream, json.RawMessage(`{"count":1}`), nil)); !e.NotSent || e.Reason != messages.EndDisconnected {
		t.Fatalf("a stream on a session the server does not know: %+v", e)
	}

	// A closed session's requests and streams were not sent either.
	h := r.bind("ex")
	h.Close()
	if rep := h.Request(r.ctx, testserver.MethodExampleList, nil); !rep.NotSent {
		t.Fatalf("a request on a closed session: %+v", rep)
	}
	if e := endOf(r, h.OpenStream(testserver.MethodExampleStream, json.RawMessage(`{"count":1}`), nil)); !e.NotSent {
		t.Fatalf("a stream on a closed session: %+v", e)
	}
	// Work that was sent is not marked.
	live := r.bind("ex")
	if rep := live.Request(r.ctx, "no/such/method", nil); rep.Err == nil || rep.NotSent {
		t.Fatalf("a request the server answered: %+v", rep)
	}
}
