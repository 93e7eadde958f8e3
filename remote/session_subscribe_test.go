package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// typedRec records a typed subscription's deliveries and checks they
// never overlap (the handler is never run concurrently with itself).
type typedRec struct {
	mu      sync.Mutex
	got     []mcprt.Delivery // guarded by mu
	inside  bool             // guarded by mu
	overlap bool             // guarded by mu
}

func (r *typedRec) handle(d mcprt.Delivery) {
	r.mu.Lock()
	if r.inside {
		r.overlap = true
	}
	r.inside = true
	r.got = append(r.got, d)
	r.inside = false
	r.mu.Unlock()
}

// ns are the "n" of the events delivered, in order.
func (r *typedRec) ns() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, d := range r.got {
		if d.Event != nil {
			var v struct{ N int }
			_ = json.Unmarshal(d.Event.Data, &v)
			out = append(out, v.N)
		}
	}
	return out
}

func (r *typedRec) last() mcprt.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		return mcprt.Delivery{}
	}
	return r.got[len(r.got)-1]
}

func (r *typedRec) events() []*mcprt.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*mcprt.Event
	for _, d := range r.got {
		if d.Event != nil {
			out = append(out, d.Event)
		}
	}
	return out
}

// evServer is the test server with events; it sends heartbeats (every
// 30 s), so no stream ends by the runtime's watchdog during a test.
func evServer(t testing.TB) config.Server {
	return config.Server{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio --events")}
}

// streamsOf counts the events streams open on the test server "ev".
func streamsOf(ctx context.Context, t *testing.T, s *Session) int {
	t.Helper()
	res, err := s.CallTool(ctx, "ev", testserver.ToolEventsStreams, map[string]any{})
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("events_streams: %v", err)
	}
	var out struct{ Streams []json.RawMessage }
	if err := json.Unmarshal([]byte(res.Content[0].Text), &out); err != nil {
		t.Fatalf("events_streams: %s", res.Content[0].Text)
	}
	return len(out.Streams)
}

func emitN(ctx context.Context, t *testing.T, s *Session, tag string, from, to int) {
	t.Helper()
	for n := from; n <= to; n++ {
		if _, err := s.CallTool(ctx, "ev", testserver.ToolEventsEmit, map[string]any{"name": testserver.EventTest, "data": map[string]any{"tag": tag, "n": n}}); err != nil {
			t.Fatal(err)
		}
	}
}

func seq(from, to int) string {
	var b strings.Builder
	for n := from; n <= to; n++ {
		fmt.Fprintf(&b, "%d,", n)
	}
	return b.String()
}

func joined(ns []int) string {
	var b strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&b, "%d,", n)
	}
	return b.String()
}

// A session's typed subscription through the member: its events arrive
// in order with cursors, only to it (another session's typed
// subscription of another tag is its own, on a stream of its own); Stop
// ends the server's stream; a subscription from the last cursor gets what
// was published meanwhile and nothing twice; Close ends the member's
// subscription (the server's stream closes); errors are the runtime's.
func TestTypedSubscribeThroughSession(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ev": evServer(t)}, ServeOptions{})
	a, b := r.attach(t, AttachOptions{}), r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	if _, err := a.Subscribe(ctx, "nope", testserver.EventTest, nil, func(mcprt.Delivery) {}); !errors.Is(err, mcprt.ErrServerNotFound) {
		t.Fatalf("an unknown server: %v", err)
	}
	if _, err := a.Subscribe(ctx, "ev", testserver.EventPollOnly, nil, func(mcprt.Delivery) {}); !errors.Is(err, mcprt.ErrInvalidArgs) {
		t.Fatalf("an event without push: %v", err)
	}
	if _, err := a.Subscribe(ctx, "ev", testserver.EventTest, []int{1}, func(mcprt.Delivery) {}); !errors.Is(err, mcprt.ErrInvalidArgs) {
		t.Fatalf("a list for arguments: %v", err)
	}
	var ra, rb typedRec
	subA, err := a.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "a"}, ra.handle)
	if err != nil {
		t.Fatal(err)
	}
	subB, err := b.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "b"}, rb.handle)
	if err != nil {
		t.Fatal(err)
	}
	if subA.ID() == "" || subA.ID() == subB.ID() {
		t.Fatalf("ids %q and %q", subA.ID(), subB.ID())
	}
	if n := streamsOf(ctx, t, a); n != 2 {
		t.Fatalf("%d streams for two typed subscriptions; want 2", n)
	}
	emitN(ctx, t, a, "a", 1, 30)
	emitN(ctx, t, b, "b", 1, 3)
	testkit.Poll(ctx, t, "a's 30 events", func() bool { return len(ra.ns()) >= 30 })
	testkit.Poll(ctx, t, "b's 3 events", func() bool { return len(rb.ns()) >= 3 })
	if got := joined(ra.ns()); got != seq(1, 30) {
		t.Fatalf("a's events in this order: %s", got)
	}
	if got := joined(rb.ns()); got != seq(1, 3) {
		t.Fatalf("b's events (its own only): %s", got)
	}
	for _, e := range ra.events() {
		if e.Cursor == "" || e.Subscription != subA.ID() || e.Server != "ev" || e.Name != testserver.EventTest {
			t.Fatalf("an event of a: %+v", e)
		}
	}
	if evs := ra.events(); subA.Cursor() != evs[len(evs)-1].Cursor {
		t.Fatalf("Cursor %q, the last event's %q", subA.Cursor(), evs[len(evs)-1].Cursor)
	}
	if list := eventsList(ctx, t, a); strings.Contains(list, subA.ID()) {
		t.Errorf("mcp_events lists the host's typed subscription: %s", list)
	}

	// Stop ends a's stream; b's goes on.
	cursor := subB.Cursor()
	subA.Stop()
	testkit.Poll(ctx, t, "a's stream to end", func() bool { return streamsOf(ctx, t, b) == 1 })
	subA.Stop() // twice: nothing
	emitN(ctx, t, b, "a", 31, 31)
	emitN(ctx, t, b, "b", 4, 4)
	testkit.Poll(ctx, t, "b's 4th event", func() bool { return len(rb.ns()) >= 4 })
	if got := joined(ra.ns()); got != seq(1, 30) {
		t.Fatalf("a got a delivery after Stop: %s", got)
	}

	// b resumes from the cursor of its 3rd event: 4, then 5, 6 published
	// while it was stopped, nothing twice.
	subB.Stop()
	testkit.Poll(ctx, t, "b's stream to end", func() bool { return streamsOf(ctx, t, a) == 0 })
	emitN(ctx, t, a, "b", 5, 6)
	var again typedRec
	if _, err := b.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "b"}, again.handle, mcprt.FromCursor(cursor)); err != nil {
		t.Fatal(err)
	}
	emitN(ctx, t, a, "b", 7, 7)
	testkit.Poll(ctx, t, "the resumed events", func() bool { return len(again.ns()) >= 4 })
	if got := joined(again.ns()); got != seq(4, 7) {
		t.Fatalf("resumed from the cursor: %s, want 4 to 7 once each", got)
	}

	// b's Close ends its subscription on the member.
	if n := streamsOf(ctx, t, a); n != 1 {
		t.Fatalf("%d streams; want b's resumed one", n)
	}
	_ = b.Close()
	testkit.Poll(ctx, t, "the closed session's stream to end", func() bool { return streamsOf(ctx, t, a) == 0 })
	for _, rec := range []*typedRec{&ra, &rb, &again} {
		rec.mu.Lock()
		if rec.overlap {
			t.Error("a handler ran concurrently with itself")
		}
		rec.mu.Unlock()
	}
}

func eventsList(ctx context.Context, t *testing.T, s *Session) string {
	tool, _ := s.Tool(mcprt.EventsToolName)
	return tool.Execute(ctx, json.RawMessage(`{"action":"list"}`)).Text
}

// The subscription's context bounds its life; the member's end is a final
// "failed" status for the handler.
func TestTypedSubscribeContextAndMemberEnd(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ev": evServer(t)}, ServeOptions{})
	s := r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	subCtx, cancel := context.WithCancel(ctx)
	if _, err := s.Subscribe(subCtx, "ev", testserver.EventTest, nil, func(mcprt.Delivery) {}); err != nil {
		t.Fatal(err)
	}
	var rec typedRec
	if _, err := s.Subscribe(ctx, "ev", testserver.EventTest, nil, rec.handle); err != nil {
		t.Fatal(err)
	}
	if n := streamsOf(ctx, t, s); n != 2 {
		t.Fatalf("%d streams; want 2", n)
	}
	cancel()
	testkit.Poll(ctx, t, "the cancelled subscription's stream to end", func() bool { return streamsOf(ctx, t, s) == 1 })
	_ = r.srv.Close()
	testkit.Poll(ctx, t, "a final status", func() bool { return rec.last().Status != nil })
	if st := rec.last().Status; st.State != "failed" || st.EndReason != "disconnected" || !strings.Contains(st.Error, "ended this session") {
		t.Fatalf("the final status: %+v", st)
	}
}

// A session that does not keep up: at most maxTypedBacklog deliveries
// wait on the member; the next one ends the subscription with a final
// "failed" status that names the bound and carries the last queued
// event's cursor; later ones are counted, not queued.
func TestTypedBacklogIsBounded(t *testing.T) {
	r := newRig(t, nil, ServeOptions{})
	life, end := context.WithCancel(context.Background())
	defer end()
	ts := &typedSub{key: 1, a: &sessionActor{srv: r.srv, self: r.srv.n.sys.NewLocalPID("none")}, life: life, end: end}
	for i := 0; i < maxTypedBacklog+5; i++ {
		ts.deliver(mcprt.Delivery{Event: &mcprt.Event{Subscription: "s1", Server: "ev", Name: "e", Cursor: fmt.Sprint(i)}})
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.queue) != maxTypedBacklog+1 || !ts.final {
		t.Fatalf("%d queued (final %v); want the bound and a final status", len(ts.queue), ts.final)
	}
	st := ts.queue[maxTypedBacklog].Status
	if st == nil || st.State != "failed" || st.EndReason != "overrun" || st.Cursor != fmt.Sprint(maxTypedBacklog-1) || st.Subscription != "s1" {
		t.Fatalf("the overrun's status: %+v", st)
	}
	if ts.late != 5 {
		t.Fatalf("%d deliveries counted as not sent; want 5", ts.late)
	}
	if life.Err() == nil {
		t.Fatal("the overrun did not end the subscription's life")
	}

	// The data bound: 32 events of 1 MiB wait, the 33rd ends it.
	life2, end2 := context.WithCancel(context.Background())
	defer end2()
	big := &typedSub{key: 2, a: ts.a, life: life2, end: end2}
	mib := json.RawMessage(make([]byte, 1<<20))
	for i := 0; i < 40; i++ {
		big.deliver(mcprt.Delivery{Event: &mcprt.Event{Subscription: "s2", Cursor: fmt.Sprint(i), Data: mib}})
	}
	big.mu.Lock()
	defer big.mu.Unlock()
	if n := len(big.queue); n != 33 || big.queue[32].Status == nil || big.queue[32].Status.Cursor != "31" || big.bytes != 32<<20 {
		t.Fatalf("%d queued, %d bytes; want 32 events of 1 MiB and the overrun's status after the 32nd", n, big.bytes)
	}
}

// A handler may Stop its own subscription (the receiver that runs it
// takes the member's answer later: no deadlock), and nothing follows; a
// subscription that fails on its own (the server terminates the stream)
// gives its final status to its handler, as the last delivery.
func TestTypedStopInHandlerAndFinalStatus(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ev": evServer(t)}, ServeOptions{})
	s := r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	var self atomic.Pointer[Subscription]
	var stopping typedRec
	sub, err := s.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "h"}, func(d mcprt.Delivery) {
		stopping.handle(d)
		self.Load().Stop()
	})
	if err != nil {
		t.Fatal(err)
	}
	self.Store(sub)
	var ending typedRec
	other, err := s.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "t"}, ending.handle)
	if err != nil {
		t.Fatal(err)
	}
	emitN(ctx, t, s, "h", 1, 1)
	testkit.Poll(ctx, t, "the handler's Stop to close its stream", func() bool { return streamsOf(ctx, t, s) == 1 })
	emitN(ctx, t, s, "h", 2, 2)
	emitN(ctx, t, s, "t", 1, 1)
	testkit.Poll(ctx, t, "the other subscription's event", func() bool { return len(ending.ns()) == 1 })
	if got := joined(stopping.ns()); got != "1," {
		t.Fatalf("deliveries after a Stop in the handler: %s", got)
	}
	if _, err := s.CallTool(ctx, "ev", testserver.ToolEventsFault, map[string]any{"fault": "terminate"}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(ctx, t, "the final status", func() bool { return ending.last().Status != nil })
	if st := ending.last().Status; st.State != "failed" || st.Subscription != other.ID() {
		t.Fatalf("the final status: %+v", st)
	}
	other.Stop() // after its end: nothing
	testkit.Poll(ctx, t, "no stream left", func() bool { return streamsOf(ctx, t, s) == 0 })
}

// A subscribe whose caller gives up before the server acknowledged it
// leaves nothing running: the member's subscribe is cancelled, and a
// server that acknowledges after all has its stream closed.
func TestTypedSubscribeGivenUp(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ev": evServer(t)}, ServeOptions{})
	s := r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	if _, err := s.CallTool(ctx, "ev", "events_arm", map[string]any{"fault": "stall"}); err != nil {
		t.Fatal(err)
	}
	subCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := s.Subscribe(subCtx, "ev", testserver.EventTest, nil, func(mcprt.Delivery) { t.Error("a delivery of a subscription given up") })
		done <- err
	}()
	testkit.Poll(ctx, t, "the stalled stream to open", func() bool { return streamsOf(ctx, t, s) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, &mcprt.Error{Kind: messages.KindAborted}) {
		t.Fatalf("a subscribe given up: %v", err)
	}
	_, _ = s.CallTool(ctx, "ev", testserver.ToolEventsFault, map[string]any{"fault": "resume"})
	testkit.Poll(ctx, t, "no stream left", func() bool { return streamsOf(ctx, t, s) == 0 })
	emitN(ctx, t, s, "", 1, 1)
	if n := streamsOf(ctx, t, s); n != 0 {
		t.Fatalf("%d streams after the subscribe was given up", n)
	}
}

// Two sessions' typed subscriptions of the same identity are separate
// (as the runtime's typed subscriptions are never reused): a stream each,
// every event to each, and one's Stop leaves the other's.
func TestTypedSameIdentityNotShared(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ev": evServer(t)}, ServeOptions{})
	a, b := r.attach(t, AttachOptions{}), r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	var ra, rb typedRec
	subA, err := a.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "s"}, ra.handle)
	if err != nil {
		t.Fatal(err)
	}
	subB, err := b.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "s"}, rb.handle)
	if err != nil {
		t.Fatal(err)
	}
	if subA.ID() == subB.ID() || streamsOf(ctx, t, a) != 2 {
		t.Fatalf("one identity, two sessions: ids %s and %s, %d streams; want two of each", subA.ID(), subB.ID(), streamsOf(ctx, t, a))
	}
	emitN(ctx, t, a, "s", 1, 2)
	testkit.Poll(ctx, t, "both sessions' events", func() bool { return len(ra.ns()) >= 2 && len(rb.ns()) >= 2 })
	subA.Stop()
	testkit.Poll(ctx, t, "a's stream to end", func() bool { return streamsOf(ctx, t, b) == 1 })
	emitN(ctx, t, b, "s", 3, 3)
	testkit.Poll(ctx, t, "b's third event", func() bool { return len(rb.ns()) >= 3 })
	if ga, gb := joined(ra.ns()), joined(rb.ns()); ga != seq(1, 2) || gb != seq(1, 3) {
		t.Fatalf("a got %s (want 1,2), b got %s (want 1 to 3)", ga, gb)
	}
	for _, e := range rb.events() {
		if e.Subscription != subB.ID() {
			t.Fatalf("b got an event of %s", e.Subscription)
		}
	}
}
