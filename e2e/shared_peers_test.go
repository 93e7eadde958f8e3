//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/remote"
)

// TestSharedTwoMembers: member B names member A as a peer. A session on B
// reaches A's server by name (the mcp tool, the typed API, its status)
// and B's own; when A dies, the session's call in flight on A's server
// fails once with an error naming A, later calls to it fail at once
// saying A cannot be reached, and B's own server keeps working.
func TestSharedTwoMembers(t *testing.T) {
	t.Parallel()
	ct := clusterTokenFile(t)
	a := startMemberWith(t, nil, nil, map[string]string{envCluster: ct}) // runs "ts"
	b := startMemberWith(t, nil,
		testServers(t, "local"),
		map[string]string{envServePeer: a.addr, envCluster: ct})
	ctx := testCtx(t)
	s := attach(t, b, nil)
	poll(ctx, t, "B to have A in its membership", func() bool { return slices.Contains(s.Servers(), "ts") })

	if got := s.Servers(); !slices.Contains(got, "ts") || !slices.Contains(got, "local") {
		t.Fatalf("servers through B: %v, want B's (local) and A's (ts)", got)
	}
	wantOK(t, mcpCall(ctx, t, s, `{"server":"ts","tool":"echo","args":{"message":"on a"}}`), "echo: on a")
	wantOK(t, mcpCall(ctx, t, s, `{"server":"local","tool":"echo","args":{"message":"on b"}}`), "echo: on b")
	statusOf := func(name string) (mcprt.ServerStatus, bool) {
		for _, st := range s.Status().Servers {
			if st.Name == name {
				return st, true
			}
		}
		return mcprt.ServerStatus{}, false
	}
	if _, ok := statusOf("ts"); !ok {
		t.Errorf("the status through B lacks A's server: %+v", s.Status())
	}
	res, err := s.CallTool(ctx, "ts", "add", map[string]any{"a": 2, "b": 3})
	if err != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "5") {
		t.Fatalf("typed call to A's server through B: %+v, %v", res, err)
	}

	killDuringCall(ctx, t, s, a, `{"server":"ts","tool":"hang","args":{}}`)
	_, err = s.CallTool(ctx, "ts", "echo", map[string]any{"message": "x"})
	if !errors.Is(err, mcprt.ErrDisconnected) || !strings.Contains(err.Error(), "cannot be reached") || !strings.Contains(err.Error(), a.addr) {
		t.Errorf("a call to A's server after A died: %v, want disconnected naming A at once", err)
	}
	wantOK(t, mcpCall(ctx, t, s, `{"server":"local","tool":"echo","args":{"message":"still"}}`), "echo: still")
	if st, ok := statusOf("ts"); !ok || st.Status != "failed" || !strings.Contains(st.LastError, a.addr) {
		t.Errorf("A's server after A died: %+v (listed %v); want failed, naming A", st, ok)
	}
}

// TestSharedEventsThroughPeer: sessions of member B subscribe to events of
// a server on member A. Two sessions with the same identity share one
// subscription and one events stream on A's server, each gets its own
// wakeups, one's unsubscribe leaves the other's, and the stream closes
// when the last owner detaches.
func TestSharedEventsThroughPeer(t *testing.T) {
	t.Parallel()
	ct := clusterTokenFile(t)
	a := startMemberWith(t, nil, map[string]any{"ev": map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio --events --events-heartbeat-ms 0")}},
		map[string]string{envCluster: ct})
	b := startMemberWith(t, nil,
		testServers(t, "local"),
		map[string]string{envServePeer: a.addr, envCluster: ct})
	ctx := testCtx(t)
	var hx, hy sessionHost
	x, y := attach(t, b, &hx), attach(t, b, &hy)
	poll(ctx, t, "B to have A in its membership", func() bool { return slices.Contains(x.Servers(), "ev") })
	subscribe := func(s toolSession) string {
		var out struct{ Subscription struct{ ID string } }
		text := eventsTool(ctx, t, s, `{"action":"subscribe","server":"ev","name":"`+ts.EventTest+`","arguments":{"tag":"p"}}`)
		if json.Unmarshal([]byte(text), &out) != nil || out.Subscription.ID == "" {
			t.Fatalf("subscribe through B: %s", text)
		}
		return out.Subscription.ID
	}
	streams := func() int {
		var out struct{ Streams []struct{ Name string } }
		res := mcpCall(ctx, t, x, `{"server":"ev","tool":"`+ts.ToolEventsStreams+`","args":{}}`)
		if res.IsError || json.Unmarshal([]byte(res.Text), &out) != nil {
			t.Fatalf("events_streams: %s", res.Text)
		}
		return len(out.Streams)
	}
	emit := func() {
		if res := mcpCall(ctx, t, x, `{"server":"ev","tool":"events_emit","args":{"name":"`+ts.EventTest+`","data":{"tag":"p"}}}`); res.IsError {
			t.Fatalf("emit: %s", res.Text)
		}
	}
	sub := subscribe(x)
	if got := subscribe(y); got != sub {
		t.Fatalf("the same identity through B gave %s and %s; want one subscription", sub, got)
	}
	if n := streams(); n != 1 {
		t.Fatalf("%d event streams on A's server; want 1", n)
	}
	// z's subscription of another identity: a batch holding both is split.
	var hz sessionHost
	z := attach(t, b, &hz)
	var zout struct{ Subscription struct{ ID string } }
	_ = json.Unmarshal([]byte(eventsTool(ctx, t, z, `{"action":"subscribe","server":"ev","name":"`+ts.EventTest+`","arguments":{"tag":"zz"}}`)), &zout)
	if res := mcpCall(ctx, t, z, `{"server":"ev","tool":"events_emit","args":{"name":"`+ts.EventTest+`","data":{"tag":"zz"}}}`); res.IsError {
		t.Fatalf("emit: %s", res.Text)
	}
	emit()
	until(ctx, t, &hx.sig, "x's wakeup", func() bool { return len(hx.eventsOf(sub)) > 0 })
	until(ctx, t, &hy.sig, "y's wakeup", func() bool { return len(hy.eventsOf(sub)) > 0 })
	until(ctx, t, &hz.sig, "z's wakeup", func() bool { return len(hz.eventsOf(`"zz"`)) > 0 })
	for _, w := range append(hx.eventWakeups(), hy.eventWakeups()...) {
		if strings.Contains(w, `"zz"`) || (zout.Subscription.ID != "" && strings.Contains(w, zout.Subscription.ID)) {
			t.Errorf("x or y received z's event: %s", w)
		}
	}
	for _, w := range hz.eventWakeups() {
		if strings.Contains(w, sub) {
			t.Errorf("z received x's and y's event: %s", w)
		}
	}

	eventsTool(ctx, t, x, `{"action":"unsubscribe","subscription_id":"`+sub+`"}`)
	if list := eventsTool(ctx, t, x, `{"action":"list"}`); strings.Contains(list, sub) {
		t.Errorf("x still lists what it left: %s", list)
	}
	if list := eventsTool(ctx, t, y, `{"action":"list"}`); !strings.Contains(list, sub) {
		t.Errorf("y lost its subscription when x left: %s", list)
	}
	before := len(hy.eventsOf(sub))
	emit()
	until(ctx, t, &hy.sig, "y's wakeup after x left", func() bool { return len(hy.eventsOf(sub)) > before })
	if err := y.Close(); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "A's stream to close with the last owner (z's remains)", func() bool { return streams() == 1 })
}

// killDuringCall makes the mcp call args (a hang of "ts" on member a)
// through session s, kills a (SIGKILL) while it is in flight, and checks
// the call fails once, naming a.
func killDuringCall(ctx context.Context, t *testing.T, s *remote.Session, a member, args string) {
	t.Helper()
	done := make(chan mcprt.Result, 2)
	go func() { done <- mcpCall(ctx, t, s, args) }()
	poll(ctx, t, "the hang call in flight on A", func() bool { return tsStatus(t, s).Leases == 1 })
	killCallee(ctx, t, done, a)
}

// killCallee kills member a (SIGKILL), which runs the call in flight that
// answers on done, and checks the call fails once, naming a.
func killCallee(ctx context.Context, t *testing.T, done chan mcprt.Result, a member) {
	t.Helper()
	if err := syscall.Kill(-a.proc.Cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var r mcprt.Result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the call in flight on the killed member was not failed")
	}
	wantError(t, r, messages.KindDisconnected.Code(), "")
	if !strings.Contains(r.Text, a.addr) {
		t.Errorf("error %q does not name the member that died (%s)", r.Text, a.addr)
	}
	select {
	case extra := <-done:
		t.Fatalf("a second answer to one call: %+v", extra)
	default:
	}
}
