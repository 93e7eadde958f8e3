package mcprt

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/demoserver"
	"github.com/mcprt/mcprt/internal/testenv"
	"github.com/mcprt/mcprt/messages"
)

// events-protocol.md (e), E:test/stream.test.mjs item 1, with our demo
// server in place of the Figma fixture: the demo server in a separate
// process over stdio, with each handshake.

// envDemoRoot, when set, turns the test binary into the demo server over
// stdio with that root (see init below).
const envDemoRoot = "MCPRT_TEST_DEMO_ROOT"

func init() {
	if root := os.Getenv(envDemoRoot); root != "" {
		err := demoserver.ServeStdio(context.Background(), os.Stdin, os.Stdout, demoserver.Options{Root: root})
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// The demo server's catalog and tools; a file written under its root
// wakes the model with an fs.changed event; unsubscribing ends the
// server's stream; closing the events session leaves the connection and
// its tools alone.
func TestEventsDemoServer(t *testing.T) {
	t.Parallel()
	for _, hs := range []string{messages.Protocol20251125, messages.Protocol20260728} {
		t.Run(hs, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			srv := config.Server{Command: testenv.Self(t), Env: map[string]string{envDemoRoot: root}, ProtocolVersion: hs}
			w := &evRig{eventsWorld: newEventsWorldWith(t, srv, Options{})}

			cat := w.events(`{"action":"catalog","server":"ev"}`)
			var names []string
			for _, e := range cat["events"].([]any) {
				names = append(names, e.(map[string]any)["name"].(string))
			}
			if len(names) != 2 || names[0] != "fs.changed" || names[1] != "clock.tick" {
				t.Fatalf("the demo's catalog: %v", names)
			}
			if got := w.tool("echo", `{"message":"hi"}`); got != "hi" && got != "echo: hi" {
				t.Fatalf("echo: %q", got)
			}
			st := w.status()
			if st.ToolCount != 6 || st.ProtocolVersion != hs {
				t.Fatalf("the demo's status: %+v", st)
			}

			s := w.subscribe("fs.changed", "", "")
			if err := os.WriteFile(filepath.Join(root, "note.txt"), []byte("hello"), 0o600); err != nil {
				t.Fatal(err)
			}
			items, _ := eventItems(t, w.next())
			var data struct{ Path, Change string }
			if len(items) != 1 || items[0].SubscriptionID != s.ID || items[0].Event.Name != "fs.changed" ||
				json.Unmarshal(items[0].Event.Data, &data) != nil || data.Path != "note.txt" || data.Change != "created" {
				t.Fatalf("the wakeup: %+v", items)
			}

			// Unsubscribing ends the server's stream (the demo_fault tool
			// counts open streams) and closes the events session, never
			// the connection its tools use.
			w.unsubscribe(s.ID)
			poll(w.ctx, t, "the demo's stream to end", func() bool { return w.tool("demo_fault", `{"fault":"resume"}`) == `{"streams":0}` })
			if got := w.tool("echo", `{"message":"still here"}`); got != "still here" && got != "echo: still here" {
				t.Fatalf("echo after unsubscribe: %q", got)
			}
			if after := w.status(); after.Generation != st.Generation || after.State != messages.StateConnected {
				t.Fatalf("the connection changed: %+v, then %+v", st, after)
			}
			if len(w.list()) != 0 {
				t.Fatalf("list: %v", w.list())
			}
		})
	}
}
