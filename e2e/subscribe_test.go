package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// The typed Subscribe against the demo server in its own process: typed
// events reach the handler (never the host's Deliver, never the model's
// list); the server's death gives a reconnecting status and the recovery
// goes on from the cursor; Stop ends the server's stream; a new
// subscription resumes from Cursor without losing the file written
// meanwhile; cancelling ctx unsubscribes too.
func TestSubscribeTyped(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	host := &countingHost{}
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{Host: host, AgentDir: t.TempDir(), Config: &config.File{MCPServers: map[string]config.Server{
		"demo": {Command: testenv.Self(t), Env: map[string]string{envDemoRoot: root}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := testCtx(t)
	write := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	deliveries := make(chan mcprt.Delivery, 64)
	handler := func(d mcprt.Delivery) { deliveries <- d }
	nextFile := func() string {
		t.Helper()
		for {
			select {
			case d := <-deliveries:
				if d.Event == nil {
					continue
				}
				var data struct{ Path string }
				if d.Event.Name != "fs.changed" || d.Event.Server != "demo" || json.Unmarshal(d.Event.Data, &data) != nil {
					t.Fatalf("an event: %+v", d.Event)
				}
				return data.Path
			case <-ctx.Done():
				t.Fatal("no event")
			}
		}
	}
	streams := func() string {
		res, err := rt.CallTool(ctx, "demo", "demo_fault", map[string]any{"fault": "resume"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].Text
	}

	if _, err := rt.Subscribe(ctx, "demo", "no.such.event", nil, handler); !errors.Is(err, mcprt.ErrInvalidArgs) {
		t.Fatalf("an unknown event: %v", err)
	}
	if _, err := rt.Subscribe(ctx, "nope", "fs.changed", nil, handler); !errors.Is(err, mcprt.ErrServerNotFound) {
		t.Fatalf("an unknown server: %v", err)
	}
	// A nil map is no arguments, for a subscription as for a call (as the
	// sidecar passes params without "arguments"); a non-object is refused.
	var none map[string]any
	tick, err := rt.Subscribe(ctx, "demo", "clock.tick", none, func(mcprt.Delivery) {})
	if err != nil {
		t.Fatalf("a nil map as arguments: %v", err)
	}
	tick.Stop()
	if _, err := rt.CallTool(ctx, "demo", "list_files", none); err != nil {
		t.Fatalf("a call with a nil map: %v", err)
	}
	if _, err := rt.CallTool(ctx, "demo", "echo", "not an object"); !errors.Is(err, mcprt.ErrInvalidArgs) {
		t.Fatalf("a call with a string for arguments: %v", err)
	}
	if _, err := rt.Subscribe(ctx, "demo", "clock.tick", []int{1}, handler); !errors.Is(err, mcprt.ErrInvalidArgs) {
		t.Fatalf("a subscription with a list for arguments: %v", err)
	}
	sub, err := rt.Subscribe(ctx, "demo", "fs.changed", map[string]any{"glob": "*.txt"}, handler)
	if err != nil {
		t.Fatal(err)
	}
	write("a.txt")
	if got := nextFile(); got != "a.txt" {
		t.Fatalf("first event: %s", got)
	}
	if sub.Cursor() == "" || sub.ID() == "" {
		t.Fatalf("cursor %q, id %q", sub.Cursor(), sub.ID())
	}
	events, _ := rt.Tool(mcprt.EventsToolName)
	if res := events.Execute(ctx, json.RawMessage(`{"action":"list"}`)); res.Text != `{"subscriptions":[]}` {
		t.Fatalf("the model's list shows the host's subscription: %s", res.Text)
	}

	// The server's death: one reconnecting status, then the retry
	// reconnects (the demo restarts; a call starts it too) and a new file
	// arrives.
	if _, err := rt.CallTool(ctx, "demo", "demo_fault", map[string]any{"fault": "disconnect"}); err != nil && !errors.Is(err, mcprt.ErrDisconnected) {
		t.Fatal(err)
	}
	for d := range deliveries {
		if d.Status != nil {
			if d.Status.State != "reconnecting" || d.Status.Subscription != sub.ID() {
				t.Fatalf("the disconnect's status: %+v", d.Status)
			}
			break
		}
	}
	poll(ctx, t, "the stream to be open again", func() bool { return streams() == `{"streams":1}` })
	write("b.txt")
	if got := nextFile(); got != "b.txt" {
		t.Fatalf("after the reconnect: %s", got)
	}

	// Stop ends the server's stream; a file written meanwhile arrives once
	// a new subscription resumes from the cursor.
	cursor := sub.Cursor()
	sub.Stop()
	poll(ctx, t, "the demo's stream to end", func() bool { return streams() == `{"streams":0}` })
	write("c.txt")
	subCtx, cancel := context.WithCancel(ctx)
	if _, err := rt.Subscribe(subCtx, "demo", "fs.changed", map[string]any{"glob": "*.txt"}, handler, mcprt.FromCursor(cursor)); err != nil {
		t.Fatal(err)
	}
	if got := nextFile(); got != "c.txt" {
		t.Fatalf("resumed from the cursor: %s", got)
	}
	cancel()
	poll(ctx, t, "the stream to end with its context", func() bool { return streams() == `{"streams":0}` })
	if n := host.delivered(); n != 0 {
		t.Fatalf("the host's Deliver was called %d times for a host's subscription", n)
	}
}

// countingHost counts deliveries.
type countingHost struct {
	mu sync.Mutex
	n  int
}

func (h *countingHost) Deliver(context.Context, mcprt.HostMessage) {
	h.mu.Lock()
	h.n++
	h.mu.Unlock()
}

func (h *countingHost) Notify(context.Context, mcprt.Notice) {}

func (h *countingHost) delivered() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}
