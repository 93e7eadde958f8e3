package actors

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// Concurrent first calls share one connection attempt: while the dial is
// under way, every call waits for it, and exactly one Dial happens.
func TestSingleFlightConnect(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{stdio(t, "sf", "")})
	r.dialer.SetHold(true)
	const n = 8
	replies := make([]chan messages.Reply, n)
	for i := range replies {
		replies[i] = make(chan messages.Reply, 1)
		ch := replies[i]
		r.sys.Post("sf", &messages.Request{Token: r.sys.NewToken(), Method: "tools/call", Params: callParams("echo", fmt.Sprintf(`{"message":"m%d"}`, i), ""),
			Deadline: messages.DeadlineCall, Origin: messages.OriginModel, Reply: func(rep messages.Reply) { ch <- rep }})
	}
	r.dialer.Wait(r.ctx, t, "the dial to finish", func() bool { return r.dialer.Held() == 1 })
	// Every call has reached the actor (the status query is behind them) and waits.
	if st := r.wantState("sf", messages.StateConnecting); st.Generation != 1 {
		t.Fatalf("generation %d while connecting", st.Generation)
	}
	r.dialer.SetHold(false)
	for i, ch := range replies {
		rep := r.recv(ch, "echo")
		if got := text(t, rep); got != fmt.Sprintf("echo: m%d", i) || rep.Gen != 1 {
			t.Fatalf("call %d: %q on gen %d", i, got, rep.Gen)
		}
	}
	if d := r.dialer.DialCount("sf"); d != 1 {
		t.Fatalf("%d concurrent first calls made %d dials, want 1", n, d)
	}
}

// At most four servers start at once: six eager servers dial at start, but
// the fifth dial begins only when one of the first four has finished.
func TestAtMostFourServersStartAtOnce(t *testing.T) {
	t.Parallel()
	var servers []ServerConfig
	for i := range 6 {
		servers = append(servers, withPolicy(stdio(t, fmt.Sprintf("s%d", i), ""), supervisor.Policy{Mode: supervisor.Eager}))
	}
	r := newRig(t, servers, func(c *Config) { c.MaxStarts = 0 }) // the default
	r.dialer.SetHold(true)
	r.dialer.Wait(r.ctx, t, "four finished dials", func() bool { return r.dialer.Held() == 4 })
	total := 0
	for _, s := range r.sys.Status(r.ctx) {
		if s.State != messages.StateConnecting {
			t.Fatalf("%s: %s while the starts are held", s.Name, s.State)
		}
		total += r.dialer.DialCount(s.Name)
	}
	if total != 4 {
		t.Fatalf("%d dials under way with four start slots held", total)
	}
	r.dialer.SetHold(false)
	r.dialer.Wait(r.ctx, t, "all six connected", func() bool { return r.dialer.Results() == 6 })
	for _, s := range r.sys.Status(r.ctx) {
		if s.State != messages.StateConnected {
			t.Fatalf("%s: %s (%v)", s.Name, s.State, s.LastError)
		}
	}
	if n := r.dialer.MaxInflight(); n != 4 {
		t.Fatalf("at most %d dials ran at once, want 4", n)
	}
}

// A tool call is never retried: a call whose server died under it fails,
// the next call connects again and works, and the server received the
// failed call exactly once. The next call works even when the dead
// connection has not finished closing yet (its process is still being
// reaped): it is not sent into the dead connection.
func TestToolCallIsNeverRetried(t *testing.T) {
	t.Parallel()
	r := newRig(t, []ServerConfig{stdio(t, "flaky", "")})
	text(t, r.call(r.ctx, "flaky", "echo", `{"message":"before"}`))
	r.dialer.SetHoldClosed(true)
	rep := r.call(r.ctx, "flaky", "crash", "")
	wantKind(t, rep, messages.KindDisconnected)
	if rep.Gen != 1 || !strings.Contains(rep.Err.Error(), `server "flaky"`) || !strings.Contains(rep.Err.Message, "status 3") {
		t.Fatalf("crash reply: gen %d, %v", rep.Gen, rep.Err)
	}
	after := r.call(r.ctx, "flaky", "echo", `{"message":"after"}`)
	if got := text(t, after); got != "echo: after" || after.Gen != 2 {
		t.Fatalf("call after the crash: %q on gen %d", got, after.Gen)
	}
	r.dialer.SetHoldClosed(false)
	r.dialer.WaitClosed(r.ctx, t, "flaky", 1)
	r.wantState("flaky", messages.StateConnected)
	text(t, r.call(r.ctx, "flaky", "echo", `{"message":"later"}`))
	if n, d := r.dialer.SentCount("flaky/crash"), r.dialer.DialCount("flaky"); n != 1 || d != 2 {
		t.Fatalf("crash sent %d times over %d dials, want once over 2", n, d)
	}
}
