package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// demoHost is the demo's agent host: it queues what the runtime delivers
// (events wakeups) for the tour to print, and prints notices.
type demoHost struct {
	cliHost
	delivered chan messages.HostMessage
	// exitExpected is set while the tour makes the demo server exit on
	// purpose: that exit's notice is told as intended, not as a warning.
	exitExpected atomic.Bool
}

func (h *demoHost) Notify(ctx context.Context, n messages.Notice) {
	if n.Server == "demo" && strings.Contains(n.Text, "exited") && h.exitExpected.CompareAndSwap(true, false) {
		fmt.Fprintln(h.w, "runtime: demo: the server process exited, as the tour asked it to")
		return
	}
	h.cliHost.Notify(ctx, n)
}

func newDemoHost(h cliHost) *demoHost {
	return &demoHost{cliHost: h, delivered: make(chan messages.HostMessage, 64)}
}

func (h *demoHost) Deliver(_ context.Context, m messages.HostMessage) {
	select {
	case h.delivered <- m:
	default: // the tour reads them all; never block the runtime
	}
}

// eventsTour subscribes to fs.changed on the demo server's root, writes
// files, forces a disconnect, and shows the recovery from the cursor: no
// event lost, none repeated.
type eventsTour struct {
	ctx  context.Context
	rt   *mcprt.Runtime
	host *demoHost
	dir  string
	say  func(format string, args ...any)
	seen map[string]int // path -> deliveries
}

func (t *eventsTour) tool(name, title string, args map[string]any) (mcprt.Result, error) {
	tool, ok := t.rt.Tool(name)
	if !ok {
		return mcprt.Result{}, failed("the runtime has no " + name + " tool")
	}
	b, _ := json.Marshal(args)
	t.say("\n$ %s %s   # %s", name, b, title)
	r := tool.Execute(t.ctx, b)
	t.say("%s", indent(r.Text))
	return r, resultError(r)
}

func (t *eventsTour) write(name string) error {
	t.say("\n(writing %s)", name)
	if err := os.WriteFile(filepath.Join(t.dir, name), []byte("written by the mcprt demo\n"), 0o600); err != nil {
		return failed("cannot write " + name)
	}
	return nil
}

// await prints what the host receives until want(m) holds, or fails after
// a few seconds.
func (t *eventsTour) await(what string, want func(messages.HostMessage) bool) error {
	if !t.take(8*time.Second, want) {
		return failed("the demo waited in vain for " + what)
	}
	return nil
}

// drain prints and records whatever the host receives within d.
func (t *eventsTour) drain(d time.Duration) {
	t.take(d, func(messages.HostMessage) bool { return false })
}

// take prints and records what the host receives until want(m) holds
// (true) or d has passed (false).
func (t *eventsTour) take(d time.Duration, want func(messages.HostMessage) bool) bool {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		select {
		case m := <-t.host.delivered:
			t.say("\n[host woken: %s]\n%s", m.Kind, indent(m.Text))
			t.record(m)
			if want(m) {
				return true
			}
		case <-timeout.C:
			return false
		}
	}
}

// record counts the files each events wakeup tells of.
func (t *eventsTour) record(m messages.HostMessage) {
	if m.Kind != "mcp-events" {
		return
	}
	_, body, _ := strings.Cut(m.Text, "\n")
	var b struct {
		Events []struct {
			Event struct {
				Data struct {
					Path string `json:"path"`
				} `json:"data"`
			} `json:"event"`
		} `json:"events"`
	}
	if json.Unmarshal([]byte(body), &b) == nil {
		for _, e := range b.Events {
			t.seen[e.Event.Data.Path]++
		}
	}
}

func (t *eventsTour) has(paths ...string) func(messages.HostMessage) bool {
	return func(messages.HostMessage) bool {
		for _, p := range paths {
			if t.seen[p] == 0 {
				return false
			}
		}
		return true
	}
}

func statusIs(status string) func(messages.HostMessage) bool {
	return func(m messages.HostMessage) bool {
		return m.Kind == "mcp-events-status" && strings.Contains(m.Text, `"status":"`+status+`"`)
	}
}

func (t *eventsTour) run() error {
	t.say("\n\nEvents: the agent subscribes, finishes its turn, and is woken when something happens.")
	if _, err := t.tool("mcp_events", "the demo server's event types", map[string]any{"action": "catalog", "server": "demo"}); err != nil {
		return err
	}
	r, err := t.tool("mcp_events", "subscribe to fs.changed (returns once the server acknowledged)",
		map[string]any{"action": "subscribe", "server": "demo", "name": "fs.changed", "arguments": map[string]any{"glob": "*.txt"}})
	if err != nil {
		return err
	}
	var sub struct {
		Subscription struct {
			ID string `json:"id"`
		} `json:"subscription"`
	}
	if json.Unmarshal([]byte(r.Text), &sub) != nil || sub.Subscription.ID == "" {
		return failed("the subscribe result has no subscription id")
	}
	id := sub.Subscription.ID
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := t.write(f); err != nil {
			return err
		}
	}
	if err := t.await("the events of a.txt and b.txt", t.has("a.txt", "b.txt")); err != nil {
		return err
	}
	t.host.exitExpected.Store(true)
	if _, err := t.tool("mcp", "force a disconnect: the demo server exits", map[string]any{"tool": "demo_fault", "args": map[string]any{"fault": "disconnect"}}); err != nil {
		return err
	}
	if err := t.await("the interruption (reconnecting)", statusIs("reconnecting")); err != nil {
		return err
	}
	if err := t.write("c.txt"); err != nil { // while the server is down
		return err
	}
	t.say("\n(the subscription reconnects after 1 s, starting a new server process, and resumes from its cursor)")
	if err := t.await("the event of c.txt after the reconnect", t.has("c.txt")); err != nil {
		return err
	}
	// A repeat would come in a later batch: let two more 500 ms batch
	// windows pass.
	t.drain(time.Second)
	var counts []string
	for _, p := range []string{"a.txt", "b.txt", "c.txt"} {
		counts = append(counts, fmt.Sprintf("%s x%d", p, t.seen[p]))
		if t.seen[p] != 1 {
			return failed(fmt.Sprintf("the demo expected each file once, got %v", t.seen))
		}
	}
	sort.Strings(counts)
	t.say("\nRecovered from the cursor: every file told once (%s), none lost, none repeated.", strings.Join(counts, ", "))
	if _, err := t.tool("mcp_events", "unsubscribe", map[string]any{"action": "unsubscribe", "subscription_id": id}); err != nil {
		return err
	}
	return nil
}
