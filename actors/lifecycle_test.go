package actors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// A lazy server connects on first use, not before; an unused connection
// closes after the idle timeout, but never while a call holds a lease on it;
// the next use connects again.
func TestLazyConnectsOnUseAndIdleCloseWaitsForCalls(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{withPolicy(stdio(t, "lazy", ""),
		supervisor.Policy{Mode: supervisor.Lazy, IdleTimeout: time.Minute})})

	r.clk.Advance(time.Hour)
	if st := r.wantState("lazy", messages.StateIdle); st.Generation != 0 || r.dialer.DialCount("lazy") != 0 {
		t.Fatalf("a lazy server connected before use: %+v", st)
	}
	if got := text(t, r.call(r.ctx, "lazy", "echo", `{"message":"one"}`)); got != "echo: one" {
		t.Fatalf("echo = %q", got)
	}
	if st := r.wantState("lazy", messages.StateConnected); st.Generation != 1 || r.dialer.DialCount("lazy") != 1 {
		t.Fatalf("after first use: %+v, %d dials", st, r.dialer.DialCount("lazy"))
	}

	// A hanging call holds the connection open past the idle timeout.
	hctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	hang := r.start(hctx, "lazy", "hang", "", "h1")
	r.waitProgress("lazy", "h1")
	if st := r.status("lazy"); st.Leases != 1 {
		t.Fatalf("in-flight call holds %d leases", st.Leases)
	}
	r.clk.Advance(3 * time.Minute)
	if st := r.wantState("lazy", messages.StateConnected); st.Generation != 1 || st.Leases != 1 {
		t.Fatalf("idle close did not wait for the call: %+v", st)
	}

	// Once the call ends the idle timeout runs again, from zero.
	cancel()
	wantKind(t, r.recv(hang, "hang"), messages.KindAborted)
	r.status("lazy") // the abort, its lease release and the idle timer are processed
	r.clk.Advance(time.Minute - time.Second)
	r.wantState("lazy", messages.StateConnected)
	r.clk.Advance(time.Second)
	if c := r.dialer.WaitClosed(r.ctx, t, "lazy", 1); c.Err != nil {
		t.Fatalf("idle close reported an error: %v", c.Err)
	}
	r.wantState("lazy", messages.StateIdle)

	// The next use connects a new generation.
	if rep := r.call(r.ctx, "lazy", "echo", `{"message":"two"}`); text(t, rep) != "echo: two" || rep.Gen != 2 {
		t.Fatalf("reuse after idle close: gen %d", rep.Gen)
	}
	if n := r.dialer.DialCount("lazy"); n != 2 {
		t.Fatalf("%d dials, want 2", n)
	}
}

// A call that arrives just after the idle timeout retired the connection
// (its close is under way) gets a new connection instead of failing in the
// closing one.
func TestCallRacingIdleCloseGetsANewConnection(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{withPolicy(stdio(t, "lazy", ""), supervisor.Policy{Mode: supervisor.Lazy, IdleTimeout: time.Minute})})
	text(t, r.call(r.ctx, "lazy", "echo", `{"message":"one"}`))
	r.status("lazy") // the idle timer is armed
	r.clk.Advance(time.Minute)
	// The timer's message is in the actor's mailbox; this call comes right after it.
	rep := r.call(r.ctx, "lazy", "echo", `{"message":"two"}`)
	if got := text(t, rep); got != "echo: two" || rep.Gen != 2 {
		t.Fatalf("call after the idle close began: %q on gen %d", got, rep.Gen)
	}
	if c := r.dialer.WaitClosed(r.ctx, t, "lazy", 1); c.Err != nil {
		t.Fatalf("idle close: %v", c.Err)
	}
	if st := r.wantState("lazy", messages.StateConnected); st.Generation != 2 {
		t.Fatalf("after the idle close: %+v", st)
	}
}

// An idle timeout of 0 means the connection is never closed for idleness.
func TestLazyZeroIdleTimeoutNeverCloses(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{withPolicy(stdio(t, "lazy0", ""), supervisor.Policy{Mode: supervisor.Lazy})})
	text(t, r.call(r.ctx, "lazy0", "echo", `{"message":"x"}`))
	r.status("lazy0")
	r.clk.Advance(30 * 24 * time.Hour)
	if st := r.wantState("lazy0", messages.StateConnected); st.Generation != 1 {
		t.Fatalf("generation %d", st.Generation)
	}
	if closed := r.dialer.Closed(); len(closed) != 0 {
		t.Fatalf("connection closed: %+v", closed)
	}
}

// An eager server connects at start without being used, is not idle-closed
// unless an idle timeout is set on it, and does not reconnect by itself
// after its server dies (the next use connects again).
func TestEagerConnectsAtStartAndNeverReconnectsByItself(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{
		withPolicy(stdio(t, "eager", ""), supervisor.Policy{Mode: supervisor.Eager}),
		withPolicy(stdio(t, "eager-idle", ""), supervisor.Policy{Mode: supervisor.Eager, IdleTimeout: time.Minute}),
	})
	for _, name := range []string{"eager", "eager-idle"} {
		if res := r.dialer.WaitResult(r.ctx, t, name, 1); res.Err != nil {
			t.Fatalf("%s: eager dial failed: %v", name, res.Err)
		}
		r.wantState(name, messages.StateConnected)
	}
	r.clk.Advance(time.Minute)
	r.dialer.WaitClosed(r.ctx, t, "eager-idle", 1)
	r.wantState("eager-idle", messages.StateIdle)
	r.clk.Advance(24 * time.Hour)
	r.wantState("eager", messages.StateConnected)

	wantKind(t, r.call(r.ctx, "eager", "crash", ""), messages.KindDisconnected)
	r.dialer.WaitClosed(r.ctx, t, "eager", 1)
	r.clk.Advance(24 * time.Hour)
	if st := r.wantState("eager", messages.StateIdle); st.LastError == nil || !strings.Contains(st.LastError.Message, "status 3") || r.dialer.DialCount("eager") != 1 {
		t.Fatalf("eager server reconnected by itself or forgot why it closed: %+v, %d dials", st, r.dialer.DialCount("eager"))
	}
	if rep := r.call(r.ctx, "eager", "echo", `{"message":"back"}`); text(t, rep) != "echo: back" || rep.Gen != 2 {
		t.Fatalf("use after the crash: gen %d", rep.Gen)
	}
}

// A keep-alive server connects at start, health-checks with a real
// tools/list every 30 s, is never idle-closed, and reconnects by itself
// when its server dies: at once after a healthy period, then after the
// backoff (30 s) when the new connection dies before proving healthy.
func TestKeepAliveHealthChecksAndReconnects(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{withPolicy(stdio(t, "ka", ""), supervisor.Policy{Mode: supervisor.KeepAlive, IdleTimeout: time.Minute})})
	if res := r.dialer.WaitResult(r.ctx, t, "ka", 1); res.Err != nil {
		t.Fatalf("keep-alive dial: %v", res.Err)
	}
	for i := 1; i <= 3; i++ {
		r.status("ka") // the health timer is armed
		r.clk.Advance(30*time.Second - time.Millisecond)
		if n := r.dialer.SentCount("ka tools/list"); n != i-1 {
			t.Fatalf("health check before 30 s: %d tools/list", n)
		}
		r.clk.Advance(time.Millisecond)
		r.dialer.Wait(r.ctx, t, "health check answered", func() bool { return r.dialer.OpResults("ka") >= i })
		if n := r.dialer.SentCount("ka tools/list"); n != i {
			t.Fatalf("after %d health periods: %d tools/list", i, n)
		}
	}
	// 90 s passed, well over the idle timeout set on it: still the first connection.
	if st := r.wantState("ka", messages.StateConnected); st.Generation != 1 {
		t.Fatalf("after health checks: %+v", st)
	}

	// The server dies; the reconnect after a healthy period is immediate.
	wantKind(t, r.call(r.ctx, "ka", "crash", ""), messages.KindDisconnected)
	r.dialer.WaitClosed(r.ctx, t, "ka", 1)
	r.wantState("ka", messages.StateBackoff)
	r.clk.Advance(0)
	if res := r.dialer.WaitResult(r.ctx, t, "ka", 2); res.Err != nil {
		t.Fatalf("reconnect: %v", res.Err)
	}
	r.wantState("ka", messages.StateConnected)

	// It dies again before a health check: now the backoff applies.
	wantKind(t, r.call(r.ctx, "ka", "crash", ""), messages.KindDisconnected)
	r.dialer.WaitClosed(r.ctx, t, "ka", 2)
	r.wantState("ka", messages.StateBackoff)
	r.clk.Advance(30*time.Second - time.Millisecond)
	if n := r.dialer.DialCount("ka"); n != 2 {
		t.Fatalf("reconnected before the 30 s backoff: %d dials", n)
	}
	r.clk.Advance(time.Millisecond)
	if res := r.dialer.WaitResult(r.ctx, t, "ka", 3); res.Err != nil {
		t.Fatalf("reconnect after backoff: %v", res.Err)
	}
	if rep := r.call(r.ctx, "ka", "echo", `{"message":"alive"}`); text(t, rep) != "echo: alive" || rep.Gen != 3 {
		t.Fatalf("call after reconnect: gen %d", rep.Gen)
	}
}

// A keep-alive server whose server stops answering (the process is frozen
// with SIGSTOP, so no EOF tells on it) is found out by the health check,
// capped at 5 s, and replaced by a new connection.
func TestKeepAliveReplacesAnUnresponsiveServer(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cfg := ServerConfig{Name: "frozen", Policy: supervisor.Policy{Mode: supervisor.KeepAlive}, Endpoint: messages.Endpoint{
		Command: "/bin/sh",
		Args:    []string{"-c", `echo $$ > "$PIDFILE.tmp" && mv "$PIDFILE.tmp" "$PIDFILE" && exec "$0"`, testenv.Self(t)},
		Env:     testenv.TestServerEnv("--stdio", "PIDFILE="+pidFile),
	}}
	r := newRig(t, []ServerConfig{cfg})
	if res := r.dialer.WaitResult(r.ctx, t, "frozen", 1); res.Err != nil {
		t.Fatal(res.Err)
	}
	pid := 0
	poll(r.ctx, t, "the pid file", func() bool {
		data, err := os.ReadFile(pidFile)
		_, serr := fmt.Sscanf(string(data), "%d", &pid)
		return err == nil && serr == nil && pid > 0
	})
	freeze(t, pid)
	defer thaw(pid)
	r.status("frozen")
	r.clk.Advance(30 * time.Second)
	r.dialer.Wait(r.ctx, t, "the health check", func() bool { return r.dialer.SentCount("frozen tools/list") == 1 })
	r.clk.Advance(5*time.Second - time.Millisecond)
	r.wantState("frozen", messages.StateConnected)
	r.clk.Advance(time.Millisecond)
	// The first reconnect after a healthy period is due at once: depending
	// on the dispatcher it has started already or waits for the next clock
	// step.
	if st := r.status("frozen"); (st.State != messages.StateBackoff && st.State != messages.StateConnecting) ||
		st.LastError == nil || st.LastError.Kind != messages.KindRequestTimeout {
		t.Fatalf("after the unanswered health check: %+v", st)
	}
	r.clk.Advance(0)
	if res := r.dialer.WaitResult(r.ctx, t, "frozen", 2); res.Err != nil {
		t.Fatalf("replacement: %v", res.Err)
	}
	if err := thaw(pid); err != nil {
		t.Fatal(err)
	}
	r.dialer.WaitClosed(r.ctx, t, "frozen", 1)
	if !procGone(pid) {
		t.Fatalf("the unresponsive server %d survived its replacement", pid)
	}
	if rep := r.call(r.ctx, "frozen", "echo", `{"message":"thawed"}`); text(t, rep) != "echo: thawed" || rep.Gen != 2 {
		t.Fatalf("call on the replacement: gen %d", rep.Gen)
	}
}

// A lazy-keep-alive server does not connect at start; after its first use
// it health-checks, ignores the idle timeout and reconnects by itself.
func TestLazyKeepAliveActivatesOnFirstUse(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{withPolicy(stdio(t, "lka", ""), supervisor.Policy{Mode: supervisor.LazyKeepAlive, IdleTimeout: time.Minute})})
	r.clk.Advance(time.Hour)
	if r.wantState("lka", messages.StateIdle); r.dialer.DialCount("lka") != 0 {
		t.Fatal("lazy-keep-alive connected before use")
	}
	text(t, r.call(r.ctx, "lka", "echo", `{"message":"x"}`))
	// Three health periods (past the idle timeout): a real tools/list each.
	// The clock moves one period at a time, so that no health check's own
	// 5 s deadline passes while its answer is on the way.
	for i := 1; i <= 3; i++ {
		r.status("lka") // the health timer is armed
		r.clk.Advance(30 * time.Second)
		r.dialer.Wait(r.ctx, t, "a health check", func() bool { return r.dialer.SentCount("lka tools/list") == i && r.dialer.OpResults("lka") == i+1 })
	}
	if st := r.wantState("lka", messages.StateConnected); st.Generation != 1 {
		t.Fatalf("idle-closed after activation: %+v", st)
	}

	wantKind(t, r.call(r.ctx, "lka", "crash", ""), messages.KindDisconnected)
	r.dialer.WaitClosed(r.ctx, t, "lka", 1)
	r.status("lka")
	r.clk.Advance(0)
	if res := r.dialer.WaitResult(r.ctx, t, "lka", 2); res.Err != nil {
		t.Fatalf("reconnect: %v", res.Err)
	}
	r.wantState("lka", messages.StateConnected)
}
