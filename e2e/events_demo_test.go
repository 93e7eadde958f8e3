package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/demoserver"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
)

// events-protocol.md (e), E:test/stream.test.mjs item 1, with our demo
// server in place of the Figma fixture: the demo server in a separate
// process over stdio, with each handshake.

// envDemoRoot, when set, turns the test binary into the demo server over
// stdio with that root (see init below); envDemoHTTP, into the demo server
// over Streamable HTTP on 127.0.0.1 with that root, printing "LISTEN
// <url>" and serving until its stdin ends.
const (
	envDemoRoot = "MCPRT_TEST_DEMO_ROOT"
	envDemoHTTP = "MCPRT_TEST_DEMO_HTTP_ROOT"
)

func init() {
	if root := os.Getenv(envDemoHTTP); root != "" {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			cancel()
		}()
		err := demoserver.ServeHTTP(ctx, "127.0.0.1:0", demoserver.Options{Root: root}, func(url string) { fmt.Println("LISTEN " + url) })
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
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
			w := &evRig{eventsWorld: newEventsWorldWith(t, srv, mcprt.Options{})}

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

// The demo server in a separate process over Streamable HTTP, with each
// handshake: catalog, an fs.changed wakeup, then the disconnect fault
// (the stream's response ends): one reconnecting wakeup, the reopen after
// the first retry delay with the latest cursor, and a file written while
// no stream was open arrives once, with nothing told twice.
func TestEventsDemoServerOverHTTP(t *testing.T) {
	t.Parallel()
	for _, hs := range []string{messages.Protocol20251125, messages.Protocol20260728} {
		t.Run(hs, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			url, _ := testenv.StartSelf(t, map[string]string{envDemoHTTP: root})
			w := &evRig{eventsWorld: newEventsWorldWith(t, config.Server{URL: url, ProtocolVersion: hs}, mcprt.Options{})}

			cat := w.events(`{"action":"catalog","server":"ev"}`)
			if evs, _ := cat["events"].([]any); len(evs) != 2 {
				t.Fatalf("the demo's catalog over HTTP: %v", cat)
			}
			s := w.subscribe("fs.changed", `{"glob":"*.txt"}`, "")
			if st := w.status(); st.ProtocolVersion != hs {
				t.Fatalf("the handshake: %+v", st)
			}
			told := map[string]int{}
			write := func(name string) {
				t.Helper()
				if err := os.WriteFile(filepath.Join(root, name), []byte(name), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("a.txt")
			w.collectFS(s.ID, told, 1)
			before := w.list()[s.ID].Cursor.String()

			mark := w.clk.Mark()
			if got := w.tool("demo_fault", `{"fault":"disconnect"}`); got != `{"streams":1}` {
				t.Fatalf("demo_fault disconnect: %s", got)
			}
			st := w.nextStatus()
			if len(st) != 1 || st[0].ID != s.ID || st[0].Status != eventstream.StateReconnecting {
				t.Fatalf("the disconnect's wakeup: %+v", st)
			}
			write("b.txt") // no stream is open: the server's next scan finds it
			w.advanceTo(mark, eventstream.DefaultRetryBase)
			w.collectFS(s.ID, told, 2)
			after := w.list()[s.ID]
			if after.Status != eventstream.StateActive || after.ID != s.ID || after.Cursor.String() == before {
				t.Fatalf("after the reopen: %+v (cursor before %s)", after, before)
			}
			write("c.txt")
			w.collectFS(s.ID, told, 3)
			w.demoQuiet("recovery confirmed by an event")
			for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
				if told[f] != 1 {
					t.Fatalf("files told: %v (each once)", told)
				}
			}
			w.unsubscribe(s.ID)
			poll(w.ctx, t, "the demo's stream to end", func() bool { return w.tool("demo_fault", `{"fault":"resume"}`) == `{"streams":0}` })
		})
	}
}

// collectFS takes events wakeups of subscription id until told (path ->
// times told) holds n paths.
func (w *evRig) collectFS(id string, told map[string]int, n int) {
	w.t.Helper()
	for len(told) < n {
		items, _ := eventItems(w.t, w.next())
		for _, it := range items {
			var data struct{ Path string }
			if it.SubscriptionID != id || json.Unmarshal(it.Event.Data, &data) != nil || data.Path == "" {
				w.t.Fatalf("an fs.changed wakeup: %+v", it)
			}
			told[data.Path]++
		}
	}
}

// demoQuiet fails when anything woke the host since the last delivery
// next returned: like quiet, with a clock.tick subscription (one tick an
// hour) that the demo's terminate fault fails as the sentinel, whose
// failed wakeup is posted after anything posted before it.
func (w *evRig) demoQuiet(what string) {
	w.t.Helper()
	sentinel := w.subscribe("clock.tick", `{"seconds":3600}`, "").ID
	if got := w.tool("demo_fault", `{"fault":"terminate","name":"clock.tick"}`); got != `{"streams":1}` {
		w.t.Fatalf("demo_fault terminate clock.tick: %s", got)
	}
	for {
		m := w.next()
		if m.Kind == "mcp-events-status" {
			items := statusItems(w.t, m)
			if len(items) == 1 && items[0].ID == sentinel && items[0].Status == eventstream.StateFailed {
				return
			}
		}
		w.t.Fatalf("%s woke the host: %+v", what, m)
	}
}
