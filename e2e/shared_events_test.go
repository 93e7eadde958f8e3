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
