package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
	"go.uber.org/goleak"
)

// Crash tests, one per actor kind, against the test server in its own
// process: the crash-injection seam (mcprt.Options.Sim.InjectCrash) makes the
// next message of one actor kind panic mid-work; the caller or the host
// sees exactly one clear outcome, later work goes on, and Close returns.

// crashNotices returns the host's notices that report a crash.
func (h *eventsHost) crashNotices() []messages.Notice {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []messages.Notice
	for _, n := range h.notices {
		if strings.Contains(n.Text, "crashed (") { // a crash report, not a failure it caused
			out = append(out, n)
		}
	}
	return out
}

func wantOneCrashNotice(t *testing.T, h *eventsHost, what string) {
	t.Helper()
	wantCrashNotice(t, h, what, messages.InjectedCrash)
}

func wantCrashNotice(t *testing.T, h *eventsHost, what, cause string) {
	t.Helper()
	got := h.crashNotices()
	if len(got) != 1 || !strings.Contains(got[0].Text, what) || !strings.Contains(got[0].Text, cause) {
		t.Fatalf("crash notices %+v, want one about %q", got, what)
	}
}

func crashEvRig(t *testing.T) (*evRig, *testkit.CrashArm) {
	arm := &testkit.CrashArm{}
	return newEvRig(t, evSetup{opts: mcprt.Options{Sim: &simseam.Seams{InjectCrash: arm.Inject}}}), arm
}

// A subscription's actor crashes on an event frame: the host is told once
// (a notice and a status wakeup), the actor restarts after 100 ms from its
// record (same cursor, same dedupe window) and takes the frame again, so
// the event is delivered exactly once; later events and duplicates behave.
func TestCrashSubscriptionActor(t *testing.T) {
	t.Parallel()
	w, arm := crashEvRig(t)
	sub := w.subscribe(ts.EventTest, "", "")
	mark := w.clk.Mark()
	w.emit(ts.EventTest, 2, "")
	first, _ := w.collect(mark, 2)

	arm.Arm(messages.ActorSubscription)
	mark = w.clk.Mark()
	w.emit(ts.EventTest, 1, "")
	arm.WaitFired(w.ctx, t, 1)
	ids, statuses := w.collect(mark, 1)
	if len(ids) != 1 || ids[0] == first[0] || ids[0] == first[1] {
		t.Fatalf("after the crash: %v (before %v)", ids, first)
	}
	if len(statuses) != 1 || !strings.Contains(statuses[0].Text, "crashed") || !strings.Contains(statuses[0].Text, sub.ID) {
		t.Fatalf("status wakeups %v, want one saying the subscription's actor crashed", statuses)
	}
	wantOneCrashNotice(t, w.host, "subscription "+sub.ID)
	if s := w.list()[sub.ID]; s.Status != eventstream.StateActive || s.Stats.Opens != 1 {
		t.Fatalf("after the restart: %+v (stats %+v)", s, s.Stats)
	}
	// The dedupe window survived: replayed events are not told again.
	mark = w.clk.Mark()
	w.fault(`{"fault":"duplicate","count":3}`)
	w.emit(ts.EventTest, 1, "")
	if more, _ := w.collect(mark, 1); len(more) != 1 || more[0] == ids[0] || more[0] == first[1] {
		t.Fatalf("after duplicates: %v", more)
	}
	if err := w.rt.Close(); err != nil {
		t.Fatal(err)
	}
}

// A batcher crashes while adding an event: restarted after 100 ms with its
// pending batch, it takes the event again; nothing is lost or doubled.
func TestCrashBatcherActor(t *testing.T) {
	t.Parallel()
	w, arm := crashEvRig(t)
	w.subscribe(ts.EventTest, "", "")
	mark := w.clk.Mark()
	w.emit(ts.EventTest, 1, "")
	first, _ := w.collect(mark, 1)
	arm.Arm(messages.ActorBatcher)
	mark = w.clk.Mark()
	w.emit(ts.EventTest, 2, "")
	arm.WaitFired(w.ctx, t, 1)
	// The restart waits for its delay on the manual clock.
	w.clk.WaitArmed(w.ctx, t, mark, 100*time.Millisecond)
	w.clk.Advance(100 * time.Millisecond)
	ids, statuses := w.collect(mark, 2)
	if len(ids) != 2 || ids[0] == first[0] || ids[0] == ids[1] || len(statuses) != 0 {
		t.Fatalf("after the crash: %v, statuses %v", ids, statuses)
	}
	wantOneCrashNotice(t, w.host, "batcher")
	if err := w.rt.Close(); err != nil {
		t.Fatal(err)
	}
}

// Bad input: a host whose Deliver panics is a crash of the batcher that
// called it, never of the host's process: restarted, the batcher counts
// the batch it was handing over in the next batch's dropped_events, and
// later events arrive.
func TestCrashHostDeliverPanics(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	w.subscribe(ts.EventTest, "", "")
	w.host.panicDeliver.Store(true)
	mark := w.clk.Mark()
	w.emit(ts.EventTest, 1, "")
	mark = w.flush(mark) // the batch of 1: Deliver panics
	until(w.ctx, t, &w.host.sig, "the crash notice", func() bool { return len(w.host.crashNotices()) == 1 })
	wantCrashNotice(t, w.host, "batcher", "the host's Deliver failed")
	w.clk.WaitArmed(w.ctx, t, mark, 100*time.Millisecond)
	w.clk.Advance(100 * time.Millisecond) // the restart
	w.flush(mark)
	m := w.host.wait(w.ctx, t, 1)
	ids, dropped := wakeEvents(t, m)
	if len(ids) != 0 || dropped != 1 {
		t.Fatalf("after the panic: events %v, dropped_events %v, want the event counted dropped", ids, dropped)
	}
	mark = w.clk.Mark()
	w.emit(ts.EventTest, 1, "")
	if more, _ := w.collect(mark, 1); len(more) != 1 {
		t.Fatalf("later: %v", more)
	}
	if err := w.rt.Close(); err != nil {
		t.Fatal(err)
	}
}

// The events actor crashes on a list: it is resumed after 100 ms with its
// records and takes the list again; the caller gets its answer once, the
// subscription goes on.
func TestCrashEventsActor(t *testing.T) {
	t.Parallel()
	w, arm := crashEvRig(t)
	sub := w.subscribe(ts.EventTest, "", "")
	arm.Arm(messages.ActorEvents)
	mark := w.clk.Mark()
	got := make(chan map[string]eventstream.Snapshot, 1)
	go func() {
		res := w.ev.Execute(w.ctx, json.RawMessage(`{"action":"list"}`))
		var out struct{ Subscriptions []eventstream.Snapshot }
		_ = json.Unmarshal([]byte(res.Text), &out)
		m := map[string]eventstream.Snapshot{}
		for _, s := range out.Subscriptions {
			m[s.ID] = s
		}
		got <- m
	}()
	arm.WaitFired(w.ctx, t, 1)
	w.clk.WaitArmed(w.ctx, t, mark, 100*time.Millisecond)
	w.clk.Advance(100 * time.Millisecond)
	select {
	case m := <-got:
		if len(m) != 1 || m[sub.ID].Status != eventstream.StateActive {
			t.Fatalf("list after the crash: %+v", m)
		}
	case <-w.ctx.Done():
		t.Fatal("the list was never answered")
	}
	wantOneCrashNotice(t, w.host, "events companion's actor")
	mark = w.clk.Mark()
	w.emit(ts.EventTest, 1, "")
	if ids, _ := w.collect(mark, 1); len(ids) != 1 {
		t.Fatalf("after the crash: %v", ids)
	}
	if err := w.rt.Close(); err != nil {
		t.Fatal(err)
	}
}

// Close returns even while the crashed events actor waits for its restart
// delay (the clock stands still): shutdown resumes it at once.
func TestCrashEventsActorCloseDoesNotWait(t *testing.T) {
	t.Parallel()
	w, arm := crashEvRig(t)
	w.subscribe(ts.EventTest, "", "")
	arm.Arm(messages.ActorEvents)
	mark := w.clk.Mark()
	go w.ev.Execute(w.ctx, json.RawMessage(`{"action":"list"}`))
	arm.WaitFired(w.ctx, t, 1)
	w.clk.WaitArmed(w.ctx, t, mark, 100*time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- w.rt.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-w.ctx.Done():
		t.Fatal("Close waited for the events actor's restart delay")
	}
}

func crashRig(t *testing.T) (*rig, *testkit.CrashArm) {
	arm := &testkit.CrashArm{}
	r := startRigWith(t, &config.File{MCPServers: map[string]config.Server{
		"ex": {Command: testenv.Self(t), Env: testenv.TestServerEnv("")},
	}}, true, mcprt.Options{Sim: &simseam.Seams{InjectCrash: arm.Inject}})
	return r, arm
}

// A server actor crashes on a call: that call is answered internal_error
// once, the actor restarts after 100 ms, and the next call works.
func TestCrashServerActor(t *testing.T) {
	t.Parallel()
	r, arm := crashRig(t)
	wantOK(t, r.exec(r.ctx, `{"tool":"ex_echo","args":{"message":"up"}}`), "echo: up")
	arm.Arm(messages.ActorServer)
	mark := r.clk.Mark()
	wantError(t, r.exec(r.ctx, `{"tool":"ex_echo","args":{"message":"x"}}`), "internal_error", "ex")
	r.clk.WaitArmed(r.ctx, t, mark, 100*time.Millisecond)
	r.clk.Advance(100 * time.Millisecond)
	wantOK(t, r.exec(r.ctx, `{"tool":"ex_echo","args":{"message":"again"}}`), "echo: again")
	if st := r.status("ex"); st.Restarts != 1 {
		t.Fatalf("status: %+v", st)
	}
}

// A session's actor crashes on a request: the request is refused with the
// reason, the session is Done with it, a new session works.
func TestCrashSessionActor(t *testing.T) {
	t.Parallel()
	r, arm := crashRig(t)
	p, err := r.rt.RegisterProtocol(exampleDef)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Connect(r.ctx, "ex")
	if err != nil {
		t.Fatal(err)
	}
	var f frames
	st, err := s.OpenStream(ts.MethodExampleStream, json.RawMessage(`{"count":1,"end":"never"}`), f.handle)
	if err != nil {
		t.Fatal(err)
	}
	f.wait(r.ctx, t, 2)
	arm.Arm(messages.ActorSession)
	if _, err := s.Request(r.ctx, ts.MethodExampleList, nil); err == nil || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("the request the session crashed on: %v", err)
	}
	<-s.Done()
	if !strings.Contains(s.Why(), "protocol session's actor crashed") {
		t.Fatalf("Why: %q", s.Why())
	}
	end := waitEnd(r.ctx, t, st.Done(), st.Closed, "the stream")
	wantEnd(t, "the session's stream", end, messages.EndError)
	if !strings.Contains(end.Error, "crashed") {
		t.Fatalf("stream end: %+v", end)
	}
	s2, err := p.Connect(r.ctx, "ex")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Request(r.ctx, ts.MethodExampleList, nil); err != nil {
		t.Fatalf("a new session: %v", err)
	}
	waitLeases(r, "ex", 0)
}

// waitLeases waits until server holds n leases.
func waitLeases(r *rig, server string, n int) {
	r.t.Helper()
	poll(r.ctx, r.t, "leases", func() bool { return r.status(server).Leases == n })
}

// A stream's actor crashes on a frame: that stream ends error with the
// reason, its request is cancelled (the lease returns), a sibling goes on.
func TestCrashStreamActor(t *testing.T) {
	t.Parallel()
	r, arm := crashRig(t)
	p, err := r.rt.RegisterProtocol(exampleDef)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Connect(r.ctx, "ex")
	if err != nil {
		t.Fatal(err)
	}
	var f1, f2 frames
	st1, err := s.OpenStream(ts.MethodExampleStream, json.RawMessage(`{"count":1000,"intervalMs":20,"end":"never"}`), f1.handle)
	if err != nil {
		t.Fatal(err)
	}
	f1.wait(r.ctx, t, 2)
	arm.Arm(messages.ActorStream)
	end := waitEnd(r.ctx, t, st1.Done(), st1.Closed, "the crashed stream")
	wantEnd(t, "the crashed stream", end, messages.EndError)
	if !strings.Contains(end.Error, "stream's actor crashed") {
		t.Fatalf("end: %+v", end)
	}
	st2, err := s.OpenStream(ts.MethodExampleStream, json.RawMessage(`{"count":2,"end":"never"}`), f2.handle)
	if err != nil {
		t.Fatal(err)
	}
	f2.wait(r.ctx, t, 3)
	st2.Cancel()
	waitEnd(r.ctx, t, st2.Done(), st2.Closed, "the sibling")
	waitLeases(r, "ex", 0)
}

// An observer's actor crashes on a notification: it ends error with the
// reason; the session and a new observer go on.
func TestCrashObserverActor(t *testing.T) {
	t.Parallel()
	r, arm := crashRig(t)
	p, err := r.rt.RegisterProtocol(exampleDef)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Connect(r.ctx, "ex")
	if err != nil {
		t.Fatal(err)
	}
	var f frames
	o, err := s.WatchNotifications([]string{ts.NoteExampleListChanged}, f.handle)
	if err != nil {
		t.Fatal(err)
	}
	arm.Arm(messages.ActorObserver)
	if _, err := s.Request(r.ctx, ts.MethodExamplePoke, nil); err != nil {
		t.Fatal(err)
	}
	end := waitEnd(r.ctx, t, o.Done(), o.Closed, "the observer")
	wantEnd(t, "the crashed observer", end, messages.EndError)
	if len(f.snapshot()) != 0 {
		t.Fatalf("the crashed observer's handler ran: %v", f.snapshot())
	}
	var f2 frames
	if _, err := s.WatchNotifications([]string{ts.NoteExampleListChanged}, f2.handle); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Request(r.ctx, ts.MethodExamplePoke, nil); err != nil {
		t.Fatal(err)
	}
	f2.wait(r.ctx, t, 1)
}

// A subscription whose actor crashes on every try of a frame is restarted
// five times (100 ms to 1.6 s) and then ended by the policy: it fails with
// the reason, the model is woken, and other subscriptions go on.
func TestCrashSubscriptionGivesUp(t *testing.T) {
	t.Parallel()
	w, arm := crashEvRig(t)
	sub := w.subscribe(ts.EventTest, "", "")
	arm.ArmAlways(messages.ActorSubscription, true)
	mark := w.clk.Mark()
	w.emit(ts.EventTest, 1, "")
	for _, d := range []time.Duration{100, 200, 400, 800, 1600} {
		mark = w.clk.WaitArmed(w.ctx, t, mark, d*time.Millisecond)
		w.clk.Advance(d * time.Millisecond)
	}
	arm.WaitFired(w.ctx, t, 6)
	arm.Arm("")
	s := w.waitStatus(sub.ID, eventstream.StateFailed)
	if !strings.Contains(s.Error, "crashed 6 times") {
		t.Fatalf("failed subscription: %+v", s)
	}
	if n := len(w.host.crashNotices()); n != 6 {
		t.Fatalf("%d crash notices, want 6: %+v", n, w.host.crashNotices())
	}
	other := w.subscribe(ts.EventTest, `{"tag":"y"}`, "")
	if other.Status != eventstream.StateActive {
		t.Fatalf("a new subscription: %+v", other)
	}
	if err := w.rt.Close(); err != nil {
		t.Fatal(err)
	}
}

// After crashes of a subscription's, the server's and the events actor, Close leaves
// nothing running: no goroutine of the runtime, no child process (the
// runtime's Close waits for its transports' goroutines and processes).
//
// Not parallel: goleak inspects every goroutine of the process.
func TestCrashesLeaveNothingRunning(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	w, arm := crashEvRig(t)
	w.subscribe(ts.EventTest, "", "")
	arm.Arm(messages.ActorSubscription)
	mark := w.clk.Mark()
	w.emit(ts.EventTest, 1, "")
	if ids, _ := w.collect(mark, 1); len(ids) != 1 {
		t.Fatalf("after a subscription crash: %v", ids)
	}
	arm.Arm(messages.ActorServer)
	mark = w.clk.Mark()
	if res := w.mcp.Execute(w.ctx, json.RawMessage(`{"tool":"echo","server":"ev","args":{"message":"x"}}`)); !res.IsError || !strings.Contains(res.Text, "crashed") {
		t.Fatalf("the call the server actor crashed on: %q", res.Text)
	}
	w.clk.WaitArmed(w.ctx, t, mark, 100*time.Millisecond)
	w.clk.Advance(100 * time.Millisecond)
	arm.Arm(messages.ActorEvents)
	mark = w.clk.Mark()
	done := make(chan struct{})
	go func() { w.ev.Execute(w.ctx, json.RawMessage(`{"action":"list"}`)); close(done) }()
	w.clk.WaitArmed(w.ctx, t, mark, 100*time.Millisecond)
	w.clk.Advance(100 * time.Millisecond)
	<-done
	if err := w.rt.Close(); err != nil {
		t.Fatal(err)
	}
	if n := w.rt.LiveActors(); n != 0 {
		t.Fatalf("%d actors alive after Close", n)
	}
	// protoactor's dead-letter throttle (a message to a stopped actor, such
	// as a reply to a crashed session's actor) keeps one goroutine for a
	// second of wall time after the first dead letter; wait for it to end.
	poll(w.ctx, t, "no goroutine of the runtime left", func() bool { return goleak.Find(ignore) == nil })
	goleak.VerifyNone(t, ignore)
}

// The events actor crashing on every message: each message is handled
// once more after a restart and, crashing again, answered with the crash;
// after five restarts the policy ends the actor, every call is then
// refused with a clear error at once, and Close returns.
func TestCrashEventsActorGivesUp(t *testing.T) {
	t.Parallel()
	w, arm := crashEvRig(t)
	arm.ArmAlways(messages.ActorEvents, true)
	mark := w.clk.Mark()
	var calls []chan mcprt.Result
	call := func() {
		ch := make(chan mcprt.Result, 1)
		calls = append(calls, ch)
		go func() { ch <- w.ev.Execute(w.ctx, json.RawMessage(`{"action":"catalog","server":"ev"}`)) }()
	}
	call()
	delays := []time.Duration{100, 200, 400, 800, 1600}
	for n := range 6 {
		arm.WaitFired(w.ctx, t, n+1)
		if n%2 == 1 {
			// The message was handled again and crashed again: its caller
			// is answered with the crash; the next call crashes it next.
			select {
			case res := <-calls[len(calls)-1]:
				if !res.IsError || !strings.Contains(res.Text, "crashed") {
					t.Fatalf("call %d: %q", len(calls), res.Text)
				}
			case <-w.ctx.Done():
				t.Fatalf("call %d was never answered", len(calls))
			}
			if n < 5 {
				call()
			}
		}
		if n < 5 {
			mark = w.clk.WaitArmed(w.ctx, t, mark, delays[n]*time.Millisecond)
			w.clk.Advance(delays[n] * time.Millisecond)
		}
	}
	arm.Arm("")
	if res := w.ev.Execute(w.ctx, json.RawMessage(`{"action":"list"}`)); res.IsError && !strings.Contains(res.Text, "events companion") {
		t.Fatalf("list after the companion stopped: %q", res.Text)
	}
	sub := w.subscribeResult(w.ctx, ts.EventTest, "", "")
	if !sub.IsError || !strings.Contains(sub.Text, "events companion has stopped") {
		t.Fatalf("subscribe after the companion stopped: %q", sub.Text)
	}
	if n := len(w.host.crashNotices()); n != 6 {
		t.Fatalf("%d crash notices, want 6", n)
	}
	if err := w.rt.Close(); err != nil {
		t.Fatal(err)
	}
}
