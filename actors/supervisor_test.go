package actors

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// A server actor that panics mid-call is restarted by the root supervisor:
// the call that crashed it and the call in flight beside it get errors, the
// crashed incarnation's server process (and its whole process group) is
// terminated, the restarted actor serves calls again on a new connection,
// and another server's concurrent calls never notice.
func TestServerActorPanicIsContained(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{stdio(t, "victim", ""), stdio(t, "other", "")})
	pid, err := strconv.Atoi(text(t, r.call(r.ctx, "victim", "grandchild", "")))
	if err != nil || procGone(pid) {
		t.Fatalf("grandchild pid %d not running (%v)", pid, err)
	}
	hctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	inflight := r.start(hctx, "victim", "hang", "", "v1")
	r.waitProgress("victim", "v1")
	otherSlow := r.start(r.ctx, "other", "slow", `{"ms":300}`, "")
	otherHang := r.start(hctx, "other", "hang", "", "o1")
	r.waitProgress("other", "o1")

	r.dialer.PanicOn("victim/add")
	mark := r.clk.Mark()
	var answers atomic.Int32
	replies := make(chan messages.Reply, 2)
	r.sys.Post("victim", &messages.Request{Token: r.sys.NewToken(), Method: "tools/call", Params: callParams("add", `{"a":1,"b":2}`, ""),
		Deadline: messages.DeadlineCall, Origin: messages.OriginModel, Reply: func(rep messages.Reply) { answers.Add(1); replies <- rep }})
	crashed := r.recv(replies, "the crashing call")
	wantKind(t, crashed, messages.KindInternal)
	if !strings.Contains(crashed.Err.Error(), `server "victim"`) {
		t.Fatalf("crash error does not name the server: %v", crashed.Err)
	}
	r.dialer.PanicOn("")
	// The restart comes after the policy's first delay (100 ms).
	r.clk.WaitArmed(r.ctx, t, mark, 100*time.Millisecond)
	r.clk.Advance(100 * time.Millisecond)
	wantKind(t, r.recv(inflight, "the in-flight call"), messages.KindInternal)

	if st := r.status("victim"); st.Restarts != 1 || st.State != messages.StateIdle {
		t.Fatalf("victim after restart: %+v", st)
	}
	if n := answers.Load(); n != 1 {
		t.Fatalf("the crashing call was answered %d times, want once", n)
	}
	r.dialer.WaitClosed(r.ctx, t, "victim", 1)
	poll(r.ctx, t, "the crashed incarnation's grandchild to die", func() bool { return procGone(pid) })
	if rep := r.call(r.ctx, "victim", "add", `{"a":1,"b":2}`); text(t, rep) != "3" || rep.Gen != 2 {
		t.Fatalf("restarted actor: gen %d", rep.Gen)
	}

	if got := text(t, r.recv(otherSlow, "other's slow call")); got != "slept 300" {
		t.Fatalf("other's concurrent call: %q", got)
	}
	if got := text(t, r.call(r.ctx, "other", "echo", `{"message":"fine"}`)); got != "echo: fine" {
		t.Fatalf("other's later call: %q", got)
	}
	cancel()
	wantKind(t, r.recv(otherHang, "other's hang"), messages.KindAborted)
	if st := r.wantState("other", messages.StateConnected); st.Restarts != 0 || st.Generation != 1 {
		t.Fatalf("other server was disturbed: %+v", st)
	}
}

// After six crashes within 60 s the server is kept down: its state is down,
// calls fail with server_failed without connecting, and only an explicit
// connect revives it.
func TestServerKeptDownAfterRepeatedCrashes(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{stdio(t, "fragile", "")})
	r.dialer.PanicOn("fragile/add")
	delays := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}
	for i := range 6 {
		mark := r.clk.Mark()
		ch := r.start(r.ctx, "fragile", "add", `{"a":1,"b":1}`, "")
		if i < len(delays) {
			r.clk.WaitArmed(r.ctx, t, mark, delays[i])
			r.clk.Advance(delays[i])
		}
		wantKind(t, r.recv(ch, "crashing call"), messages.KindInternal)
		st := r.status("fragile")
		if st.Restarts != i+1 {
			t.Fatalf("after crash %d: %d restarts", i+1, st.Restarts)
		}
		if want := i == 5; (st.State == messages.StateDown) != want {
			t.Fatalf("after crash %d: state %s", i+1, st.State)
		}
	}
	dials := r.dialer.DialCount("fragile")
	rep := r.call(r.ctx, "fragile", "echo", `{"message":"x"}`)
	wantKind(t, rep, messages.KindServerFailed)
	if r.dialer.DialCount("fragile") != dials {
		t.Fatal("a call to a server kept down connected it")
	}
	r.wantState("fragile", messages.StateDown)

	r.dialer.PanicOn("")
	if c := r.sys.Connect(r.ctx, "fragile", false); c.Err != nil {
		t.Fatalf("explicit connect: %v", c.Err)
	}
	if got := text(t, r.call(r.ctx, "fragile", "add", `{"a":2,"b":2}`)); got != "4" {
		t.Fatalf("after revival: %q", got)
	}
	r.wantState("fragile", messages.StateConnected)
}
