package remote

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/types/known/wrapperspb"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// Crash tests of the shared runtime's actors, one per kind (supervise.go;
// docs/architecture.md, "Supervision"): the crash-injection seam
// (ServeOptions.InjectCrash, AttachOptions.InjectCrash) makes the next
// message of one kind panic mid-work, with a member and sessions in this
// process and the test server in its own; then no caller is left
// waiting, nothing is answered twice, leases and subscriptions return,
// the member serves its other sessions, and Close returns.

// noticeHost records a session's notices and deliveries; its Deliver
// panics while panicky is set.
type noticeHost struct {
	mu       sync.Mutex
	notices  []string
	delivers int
	panicky  bool
	sig      testkit.Signal
}

func (h *noticeHost) Deliver(context.Context, messages.HostMessage) {
	h.mu.Lock()
	h.delivers++
	p := h.panicky
	h.mu.Unlock()
	h.sig.Notify()
	if p {
		panic("host deliver exploded")
	}
}

func (h *noticeHost) Notify(_ context.Context, n messages.Notice) {
	h.mu.Lock()
	h.notices = append(h.notices, n.Text)
	h.mu.Unlock()
	h.sig.Notify()
}

// crashes returns the notices that report a crash and hold want.
func (h *noticeHost) crashes(want string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, n := range h.notices {
		if strings.Contains(n, "crashed (") && strings.Contains(n, want) {
			out = append(out, n)
		}
	}
	return out
}

func (h *noticeHost) waitCrash(ctx context.Context, t *testing.T, want string) {
	t.Helper()
	testkit.Until(ctx, t, &h.sig, "a crash notice holding "+want, func() bool { return len(h.crashes(want)) > 0 })
}

// echo calls the test server's echo through s and wants its answer.
func echo(ctx context.Context, t *testing.T, s *Session, text string) {
	t.Helper()
	res, err := s.CallTool(ctx, "ts", "echo", map[string]any{"message": text})
	if err != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, text) {
		t.Fatalf("echo %q: %+v, %v", text, res, err)
	}
}

// hang starts a call that the test server never answers; its outcome
// comes on the channel.
func hang(ctx context.Context, t *testing.T, s *Session) <-chan mcprt.Result {
	t.Helper()
	tool, ok := s.Tool(mcprt.MCPToolName)
	if !ok {
		t.Fatal("no mcp tool through the session")
	}
	done := make(chan mcprt.Result, 2)
	go func() { done <- tool.Execute(ctx, json.RawMessage(`{"server":"ts","tool":"hang","args":{}}`)) }()
	return done
}

// TestCrashGateway: the gateway crashes on an attach in flight; it is
// resumed after the policy's delay and the attach succeeds, the sessions
// attached before keep working (none is orphaned) and are told; an attach
// it crashes on twice is refused at once with a clear error.
func TestCrashGateway(t *testing.T) {
	var arm testkit.CrashArm
	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{InjectCrash: arm.Inject})
	ctx := testkit.Ctx(t)
	var ha noticeHost
	a := r.attach(t, AttachOptions{Host: &ha})
	echo(ctx, t, a, "before")

	arm.Arm(messages.ActorGateway)
	b := r.attach(t, AttachOptions{}) // crashes the gateway, then is taken again
	arm.WaitFired(ctx, t, 1)
	echo(ctx, t, b, "b after the crash")
	echo(ctx, t, a, "a after the crash")
	ha.waitCrash(ctx, t, "gateway")
	if got := ha.crashes("gateway"); len(got) != 1 || !strings.Contains(got[0], "injected crash") || !strings.Contains(got[0], "restarting in 100ms") {
		t.Errorf("crash notices %q; want one, naming the crash and the 100ms restart", got)
	}
	if n := r.srv.Sessions(); n != 2 {
		t.Errorf("%d sessions after the gateway's crash; want 2", n)
	}

	// Twice on the same attach: the attaching process is answered.
	arm.ArmAlways(messages.ActorGateway, true)
	_, err := Attach(ctx, r.srv.Addr(), AttachOptions{TokenFile: r.srv.TokenFile()})
	arm.Arm("")
	if err == nil || !strings.Contains(err.Error(), "crashed twice") {
		t.Fatalf("attach the gateway crashed on twice: %v; want a clear error", err)
	}
	c := r.attach(t, AttachOptions{})
	echo(ctx, t, c, "c")
	echo(ctx, t, a, "a at the end")
	if n := r.srv.Sessions(); n != 3 {
		t.Errorf("%d sessions; want 3 (the refused attach holds none)", n)
	}
}

// TestCrashAttachedSessionActor: a session's actor crashes while a call
// is in flight and the session holds a subscription: the session ends
// with "its actor crashed": the call is answered once with that error,
// its lease returns, its subscription ends on the server, the session's
// process is told (later calls fail at once); another session is told of
// the crash and keeps working.
func TestCrashAttachedSessionActor(t *testing.T) {
	var arm testkit.CrashArm
	evServer := config.Server{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio --events --events-heartbeat-ms 0")}
	// Manual clocks: no heartbeat and no session timeout, so the crash
	// lands on the message a's call sends, not on b's actor.
	r := newRig(t, map[string]config.Server{"ts": evServer}, ServeOptions{InjectCrash: arm.Inject, Clock: testkit.NewClock()})
	ctx := testkit.Ctx(t)
	var rec tap
	replies := map[uint64]int{} // crash-ended replies by call id
	wireTapForTest = func(b []byte) {
		if m, err := decode(wrapperspb.Bytes(b)); err == nil {
			if rep, ok := m.(*replyMsg); ok && rep.Err != nil && strings.Contains(rep.Err.Message, "actor crashed") {
				rec.mu.Lock()
				replies[rep.ID]++
				rec.mu.Unlock()
			}
		}
	}
	t.Cleanup(func() { wireTapForTest = nil })
	var hb noticeHost
	a, b := r.attach(t, AttachOptions{Clock: testkit.NewClock()}), r.attach(t, AttachOptions{Host: &hb, Clock: testkit.NewClock()})
	events, _ := a.Tool(mcprt.EventsToolName)
	res := events.Execute(ctx, json.RawMessage(`{"action":"subscribe","server":"ts","name":"`+ts.EventTest+`","arguments":{"tag":"crash"}}`))
	if res.IsError {
		t.Fatalf("subscribe: %s", res.Text)
	}
	streams := func() int {
		res, err := r.rt.CallTool(ctx, "ts", ts.ToolEventsStreams, nil)
		if err != nil || len(res.Content) == 0 {
			t.Fatalf("events_streams: %+v, %v", res, err)
		}
		var out struct{ Streams []json.RawMessage }
		_ = json.Unmarshal([]byte(res.Content[0].Text), &out)
		return len(out.Streams)
	}
	testkit.Poll(ctx, t, "the subscription's stream open", func() bool { return streams() == 1 })
	held := leases(r, "ts") // the subscription's stream holds one
	done := hang(ctx, t, a)
	testkit.Poll(ctx, t, "the hang call in flight", func() bool { return leases(r, "ts") == held+1 })

	arm.Arm(messages.ActorAttachedSession)
	// The request this call sends crashes a's actor.
	_, err := a.CallTool(ctx, "ts", "echo", map[string]any{"message": "x"})
	if !errors.Is(err, mcprt.ErrDisconnected) {
		t.Errorf("call when the session's actor crashed: %v; want disconnected", err)
	}
	got := <-done
	if !got.IsError || got.ErrorCode() != messages.KindDisconnected.Code() || !strings.Contains(got.Text, "actor crashed (injected crash)") {
		t.Fatalf("the call in flight: %q; want disconnected, its actor crashed", got.Text)
	}
	testkit.Poll(ctx, t, "the lease returned", func() bool { return leases(r, "ts") == 0 })
	testkit.Poll(ctx, t, "the subscription's stream closed", func() bool { return streams() == 0 })
	testkit.Poll(ctx, t, "the session gone", func() bool { return r.srv.Sessions() == 1 })
	if _, err := a.CallTool(ctx, "ts", "echo", nil); !errors.Is(err, mcprt.ErrDisconnected) {
		t.Errorf("call after the session ended: %v", err)
	}
	hb.waitCrash(ctx, t, "actor")
	echo(ctx, t, b, "b goes on")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(replies) != 1 {
		t.Errorf("crash-ended replies %v; want one, for the call in flight", replies)
	}
	for id, n := range replies {
		if n != 1 {
			t.Errorf("call %d answered %d times", id, n)
		}
	}
	select {
	case extra := <-done:
		t.Errorf("a second answer: %+v", extra)
	default:
	}
}

// TestCrashReceiver: this process's receiver crashes on a call's reply:
// it is resumed after the delay and the reply reaches its caller once;
// the host is told. A host whose Deliver panics crashes the receiver, not
// the process, and the delivery is not handed to it again.
func TestCrashReceiver(t *testing.T) {
	var arm testkit.CrashArm
	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{})
	ctx := testkit.Ctx(t)
	var h noticeHost
	s := r.attach(t, AttachOptions{Host: &h, InjectCrash: arm.Inject})
	echo(ctx, t, s, "before")
	arm.Arm(messages.ActorReceiver)
	echo(ctx, t, s, "its reply crashes the receiver")
	arm.WaitFired(ctx, t, 1)
	h.waitCrash(ctx, t, "receiver")
	if got := h.crashes("receiver"); len(got) != 1 || !strings.Contains(got[0], "restarting in 100ms") {
		t.Errorf("crash notices %q; want one, restarting in 100ms", got)
	}

	h.mu.Lock()
	h.panicky = true
	h.mu.Unlock()
	r.srv.router.Deliver(ctx, messages.HostMessage{Kind: "test", Text: "boom"})
	testkit.Until(ctx, t, &h.sig, "the host's panic reported", func() bool { return len(h.crashes("host's callback panicked")) == 1 })
	h.mu.Lock()
	h.panicky = false
	h.mu.Unlock()
	echo(ctx, t, s, "after the host's panic")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.delivers != 1 {
		t.Errorf("the delivery whose Deliver panicked was handed %d times; want 1", h.delivers)
	}
}

// TestCrashReceiverGivesUp: a receiver that keeps crashing exhausts the
// policy (a 6th crash within the window, after the delays 100 ms to
// 1.6 s): the session fails, every caller answered once (none waits), the
// member ends the session (its lease returns), Close returns.
func TestCrashReceiverGivesUp(t *testing.T) {
	var arm testkit.CrashArm
	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{Clock: testkit.NewClock()})
	ctx := testkit.Ctx(t)
	clk := testkit.NewClock()
	var h noticeHost
	s := r.attach(t, AttachOptions{Host: &h, InjectCrash: arm.Inject, Clock: clk})
	done := hang(ctx, t, s)
	testkit.Poll(ctx, t, "the hang call in flight", func() bool { return leases(r, "ts") == 1 })
	arm.ArmAlways(messages.ActorReceiver, true)
	echoes := make(chan error, 8)
	for range 8 { // their replies feed the crashes
		go func() {
			_, err := s.CallTool(ctx, "ts", "echo", map[string]any{"message": "x"})
			echoes <- err
		}()
	}
	mark := 0
	for i, d := range []time.Duration{100, 200, 400, 800, 1600} {
		arm.WaitFired(ctx, t, i+1)
		mark = clk.WaitArmed(ctx, t, mark, d*time.Millisecond)
		clk.Advance(d * time.Millisecond)
	}
	arm.WaitFired(ctx, t, 6)
	got := <-done
	if !got.IsError || !strings.Contains(got.Text, "receiver crashed 6 times") {
		t.Fatalf("the call in flight: %q; want the session ended by its receiver's crashes", got.Text)
	}
	for range 8 {
		if err := <-echoes; err == nil {
			t.Error("an echo succeeded through a receiver that crashes on every message")
		}
	}
	testkit.Poll(ctx, t, "the member ended the session", func() bool { return r.srv.Sessions() == 0 && leases(r, "ts") == 0 })
	if _, err := s.CallTool(ctx, "ts", "echo", nil); !errors.Is(err, mcprt.ErrDisconnected) {
		t.Errorf("call after the session failed: %v", err)
	}
	if got := h.crashes("receiver"); len(got) != 6 || !strings.Contains(got[5], "ended") {
		t.Errorf("crash notices %q; want 6, the last one ended", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCrashClientHook: a session's client hook that panics is a crash of
// the goroutine answering that question, never of the process: the
// question is answered with an error, the host is told, the session goes
// on.
func TestCrashClientHook(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{})
	ctx := testkit.Ctx(t)
	var h noticeHost
	answered := make(chan *answerMsg, 1)
	wireTapForTest = func(b []byte) {
		if m, err := decode(wrapperspb.Bytes(b)); err == nil {
			if a, ok := m.(*answerMsg); ok && a.ID == 99 {
				select {
				case answered <- a:
				default:
				}
			}
		}
	}
	t.Cleanup(func() { wireTapForTest = nil })
	s := r.attach(t, AttachOptions{Host: &h, Client: mcprt.ClientHooks{
		ListRoots: func(context.Context, string) ([]mcprt.Root, error) { panic("roots hook exploded") },
	}})
	s.serveAsk(&askMsg{ID: 99, Kind: askRoots, Server: "ts"})
	a := <-answered
	if a.Err == nil || !strings.Contains(a.Err.Message, "roots hook failed") {
		t.Fatalf("the question whose hook panicked was answered %+v; want an error", a)
	}
	testkit.Until(ctx, t, &h.sig, "the hook's panic reported", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.notices) == 1 && strings.Contains(h.notices[0], "roots hook exploded")
	})
	echo(ctx, t, s, "the session goes on")
}

// TestCrashesLeaveNothingRunning: after a crash of each kind, closing the
// sessions, the member and the runtime leaves no goroutine behind.
func TestCrashesLeaveNothingRunning(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	ctx := testkit.Ctx(t)
	var arm testkit.CrashArm
	srv := NewServer(ServeOptions{TokenFile: filepath.Join(t.TempDir(), "member.token"), InjectCrash: arm.Inject})
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: &config.File{MCPServers: map[string]config.Server{"ts": testServer(t, nil)}}, Host: srv.Host()})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(rt); err != nil {
		t.Fatal(err)
	}
	attach := func(opts AttachOptions) *Session {
		opts.TokenFile = srv.TokenFile()
		s, err := Attach(ctx, srv.Addr(), opts)
		if err != nil {
			t.Fatalf("attach: %v", err)
		}
		return s
	}
	var sArm testkit.CrashArm
	a := attach(AttachOptions{InjectCrash: sArm.Inject})
	arm.Arm(messages.ActorGateway)
	b := attach(AttachOptions{})
	echo(ctx, t, b, "b")
	done := hang(ctx, t, b)
	testkit.Poll(ctx, t, "the hang call in flight", func() bool { return leases(&rig{rt: rt, srv: srv}, "ts") == 1 })
	arm.Arm(messages.ActorAttachedSession)
	if _, err := b.CallTool(ctx, "ts", "echo", nil); err == nil {
		t.Error("a call crashing its session's actor succeeded")
	}
	<-done
	sArm.Arm(messages.ActorReceiver)
	echo(ctx, t, a, "a")
	// A crash whose restart delay is still pending when Close begins.
	sArm.ArmAlways(messages.ActorReceiver, true)
	_, _ = a.CallTool(ctx, "ts", "echo", nil)
	for _, s := range []*Session{a, b} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	// protoactor's cluster gossiper logs through a throttle whose timer
	// goroutine it starts again every 60 s and never stops: library-owned,
	// it ends within 60 s of the member's Close (docs/shared.md).
	throttle := goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/cluster.(*Gossiper).StartGossiping.NewThrottle.func3.1")
	testkit.Poll(ctx, t, "no goroutine left", func() bool { return goleak.Find(ignore, throttle) == nil })
	goleak.VerifyNone(t, ignore, throttle)
}
