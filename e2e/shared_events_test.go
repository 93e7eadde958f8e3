//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// sessionHost records a session's deliveries.
type sessionHost struct {
	sig signal
	mu  sync.Mutex
	got []messages.HostMessage // guarded by mu
}

func (h *sessionHost) Deliver(_ context.Context, m messages.HostMessage) {
	h.mu.Lock()
	h.got = append(h.got, m)
	h.mu.Unlock()
	h.sig.Notify()
}

func (h *sessionHost) Notify(context.Context, messages.Notice) {}

// eventWakeups returns the text of every events wakeup (not status).
func (h *sessionHost) eventWakeups() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, m := range h.got {
		if m.Kind == "mcp-events" {
			out = append(out, m.Text)
		}
	}
	return out
}

// eventsOf is the text of every events wakeup that holds tag.
func (h *sessionHost) eventsOf(tag string) []string {
	var out []string
	for _, w := range h.eventWakeups() {
		if strings.Contains(w, tag) {
			out = append(out, w)
		}
	}
	return out
}

type toolSession interface {
	Tool(string) (mcprt.Tool, bool)
}

// eventsTool runs mcp_events through a session.
func eventsTool(ctx context.Context, t *testing.T, s toolSession, args string) string {
	t.Helper()
	tool, ok := s.Tool(mcprt.EventsToolName)
	if !ok {
		t.Fatal("no mcp_events through the session")
	}
	res := tool.Execute(ctx, json.RawMessage(args))
	if res.IsError {
		t.Fatalf("mcp_events %s: %s", args, res.Text)
	}
	return res.Text
}

// TestSharedSameIdentityOneStream: two sessions subscribing with the same
// identity share the runtime's subscription (one events stream on the
// server) and each gets its own wakeup of every event; a batch mixing one
// session's other subscription reaches only that session; one session's
// unsubscribe and its detach end only its share, and the stream closes
// with the last owner.
func TestSharedSameIdentityOneStream(t *testing.T) {
	t.Parallel()
	m := startMember(t, map[string]any{"ev": map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio --events --events-heartbeat-ms 0")}})
	ctx := testCtx(t)
	var ha, hb sessionHost
	a, b := attach(t, m, &ha), attach(t, m, &hb)
	sub := func(s toolSession, tag string) string {
		var out struct{ Subscription struct{ ID string } }
		text := eventsTool(ctx, t, s, `{"action":"subscribe","server":"ev","name":"`+ts.EventTest+`","arguments":{"tag":"`+tag+`"}}`)
		if json.Unmarshal([]byte(text), &out) != nil || out.Subscription.ID == "" {
			t.Fatalf("subscribe %s: %s", tag, text)
		}
		return out.Subscription.ID
	}
	streams := func() int {
		var out struct{ Streams []struct{ Name string } }
		res := mcpCall(ctx, t, a, `{"server":"ev","tool":"`+ts.ToolEventsStreams+`","args":{}}`)
		if res.IsError || json.Unmarshal([]byte(res.Text), &out) != nil {
			t.Fatalf("events_streams: %s", res.Text)
		}
		return len(out.Streams)
	}
	emit := func(tag string) {
		res := mcpCall(ctx, t, a, `{"server":"ev","tool":"events_emit","args":{"name":"`+ts.EventTest+`","data":{"tag":"`+tag+`"}}}`)
		if res.IsError {
			t.Fatalf("emit: %s", res.Text)
		}
	}
	shared := sub(a, "same")
	if got := sub(b, "same"); got != shared {
		t.Fatalf("the same identity gave subscriptions %s and %s; want one, shared", shared, got)
	}
	if n := streams(); n != 1 {
		t.Fatalf("%d event streams on the server for one identity; want 1", n)
	}
	onlyA := sub(a, "only-a")
	emit("only-a")
	emit("same")
	until(ctx, t, &ha.sig, "a's wakeups of both", func() bool { return len(ha.eventsOf(`"tag":"same"`)) > 0 && len(ha.eventsOf("only-a")) > 0 })
	until(ctx, t, &hb.sig, "b's wakeup of the shared event", func() bool { return len(hb.eventsOf(`"tag":"same"`)) > 0 })
	for _, w := range hb.eventWakeups() {
		if strings.Contains(w, onlyA) || strings.Contains(w, "only-a") {
			t.Errorf("b received a's own subscription's event: %s", w)
		}
	}
	if list := eventsTool(ctx, t, b, `{"action":"list"}`); strings.Contains(list, onlyA) || !strings.Contains(list, shared) {
		t.Errorf("b's list shows what is not its own, or misses its own: %s", list)
	}

	// a gives up its share: b keeps the subscription and its wakeups.
	eventsTool(ctx, t, a, `{"action":"unsubscribe","subscription_id":"`+shared+`"}`)
	if list := eventsTool(ctx, t, a, `{"action":"list"}`); strings.Contains(list, shared) {
		t.Errorf("a still lists the subscription it left: %s", list)
	}
	before := len(hb.eventsOf(`"tag":"same"`))
	emit("same")
	until(ctx, t, &hb.sig, "b's wakeup after a left", func() bool { return len(hb.eventsOf(`"tag":"same"`)) > before })
	if n := streams(); n != 2 {
		t.Errorf("%d event streams after a left the shared one; want 2 (shared, only-a)", n)
	}
	// A session cannot end what it does not own.
	eventsTool(ctx, t, a, `{"action":"unsubscribe","subscription_id":"`+shared+`"}`)
	if list := eventsTool(ctx, t, b, `{"action":"list"}`); !strings.Contains(list, shared) {
		t.Errorf("a's second unsubscribe ended b's subscription: %s", list)
	}
	// b, the last owner, detaches: the shared stream closes.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "the shared stream to close with its last owner", func() bool { return streams() == 1 })
}

// TestSharedSessionsOwnSubscriptions: each attached session's wakeups
// reach its own Host only, and a session's detach ends its own
// subscriptions, not the other's.
func TestSharedSessionsOwnSubscriptions(t *testing.T) {
	t.Parallel()
	m := startMember(t, map[string]any{"ts": map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio --events --events-heartbeat-ms 0")}})
	ctx := testCtx(t)
	var ha, hb sessionHost
	a, b := attach(t, m, &ha), attach(t, m, &hb)
	subscribe := func(s interface {
		Tool(string) (mcprt.Tool, bool)
	}, tag string) string {
		tool, _ := s.Tool(mcprt.EventsToolName)
		res := tool.Execute(ctx, json.RawMessage(`{"action":"subscribe","server":"ts","name":"`+ts.EventTest+`","arguments":{"tag":"`+tag+`"}}`))
		var out struct{ Subscription struct{ ID string } }
		if res.IsError || json.Unmarshal([]byte(res.Text), &out) != nil || out.Subscription.ID == "" {
			t.Fatalf("subscribe %s: %s", tag, res.Text)
		}
		return out.Subscription.ID
	}
	subA, subB := subscribe(a, "for-a"), subscribe(b, "for-b")
	emit := func(tag string) {
		res := mcpCall(ctx, t, b, `{"tool":"events_emit","args":{"name":"`+ts.EventTest+`","data":{"tag":"`+tag+`"}}}`)
		if res.IsError {
			t.Fatalf("emit: %s", res.Text)
		}
	}
	emit("for-a")
	until(ctx, t, &ha.sig, "a's wakeup", func() bool { return len(ha.eventWakeups()) > 0 })
	emit("for-b")
	until(ctx, t, &hb.sig, "b's wakeup", func() bool { return len(hb.eventWakeups()) > 0 })
	// Deliveries to one session arrive in order, so had a's wakeup been
	// routed to b too, b would have it before its own.
	for _, w := range hb.eventWakeups() {
		if strings.Contains(w, subA) || strings.Contains(w, "for-a") {
			t.Errorf("b received a's wakeup: %s", w)
		}
	}
	for _, w := range ha.eventWakeups() {
		if strings.Contains(w, subB) {
			t.Errorf("a received b's wakeup: %s", w)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	tool, _ := b.Tool(mcprt.EventsToolName)
	poll(ctx, t, "a's subscription ended with its session, b's kept", func() bool {
		res := tool.Execute(ctx, json.RawMessage(`{"action":"list"}`))
		return !strings.Contains(res.Text, subA) && strings.Contains(res.Text, subB)
	})
}
