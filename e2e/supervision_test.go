package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// Through the embedding API: a server whose actor crashes six times within
// 60 s is reported down (status and calls say so, and calls do not connect
// it) until mcprt.Runtime.Connect revives it; the other server never notices.
func TestRuntimeConnectRevivesADownServer(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]config.Server{"frail": selfServer(t, ""), "sturdy": selfServer(t, "")}, true)
	wantOK(t, r.exec(r.ctx, `{"tool":"frail_echo","args":{"message":"up"}}`), "echo: up")
	r.dialer.PanicOn("frail/add")
	for i, delay := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 0} {
		mark := r.clk.Mark()
		ch := r.start(r.ctx, `{"tool":"frail_add","args":{"a":1,"b":1}}`)
		if delay > 0 {
			r.clk.WaitArmed(r.ctx, t, mark, delay)
			r.clk.Advance(delay)
		}
		wantError(t, r.recv(ch, "a crashing call"), "internal_error", "frail")
		if st := r.status("frail"); st.Restarts != i+1 {
			t.Fatalf("after crash %d: %+v", i+1, st)
		}
	}
	dials := r.dialer.DialCount("frail")
	if res := r.exec(r.ctx, `{}`); !strings.Contains(res.Text, "✗ frail (down after repeated crashes)") {
		t.Fatalf("status: %q", res.Text)
	}
	wantError(t, r.exec(r.ctx, `{"tool":"frail_echo","args":{"message":"x"}}`), "server_failed", "frail")
	if r.dialer.DialCount("frail") != dials {
		t.Fatal("a call connected a server kept down")
	}
	wantOK(t, r.exec(r.ctx, `{"tool":"sturdy_add","args":{"a":2,"b":3}}`), "5")

	r.dialer.PanicOn("")
	if _, err := r.rt.Connect(r.ctx, "frail", false); err != nil {
		t.Fatalf("Runtime.Connect: %v", err)
	}
	if st := r.status("frail"); st.State != messages.StateConnected {
		t.Fatalf("after mcprt.Runtime.Connect: %+v", st)
	}
	wantOK(t, r.exec(r.ctx, `{"tool":"frail_add","args":{"a":1,"b":1}}`), "2")
	if st := r.status("sturdy"); st.Restarts != 0 || st.Generation != 1 {
		t.Fatalf("the other server was disturbed: %+v", st)
	}
}

// Close does not wait for a crashed server actor's restart delay: the
// actor is restarted at once to take part in the ordered shutdown, and the
// crashed incarnation's calls and processes end with it.
func TestCloseDoesNotWaitForARestartDelay(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]config.Server{"frail": selfServer(t, "")}, true)
	r.dialer.SetProgress(true)
	inflight := r.start(r.ctx, `{"tool":"frail_hang"}`)
	r.dialer.WaitProgress(r.ctx, t, 1)
	r.dialer.PanicOn("frail/add")
	mark := r.clk.Mark()
	wantError(t, r.exec(r.ctx, `{"tool":"frail_add","args":{"a":1,"b":1}}`), "internal_error", "frail")
	r.clk.WaitArmed(r.ctx, t, mark, 100*time.Millisecond) // the restart waits for the clock, which stands still
	closed := make(chan error, 1)
	go func() { closed <- r.rt.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-r.ctx.Done():
		t.Fatal("Close waited for the restart delay")
	}
	if res := r.recv(inflight, "the crashed incarnation's call"); !res.IsError {
		t.Fatalf("in-flight call: %q", res.Text)
	}
	r.real.Wait() // every connection's goroutines (and its process) are gone
}
