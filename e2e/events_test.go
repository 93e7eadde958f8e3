package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
)

// The events companion end to end: the mcp_events tool against the test
// server's events namespace in a separate process, with the runtime's
// timers (batch windows, retries, watchdogs) on a manual clock.

// eventsHost records what the runtime delivers and notifies.
type eventsHost struct {
	mu        sync.Mutex
	delivered []messages.HostMessage
	notices   []messages.Notice
	sig       signal
	// panicDeliver makes the next Deliver panic (a host's bug).
	panicDeliver atomic.Bool
}

func (h *eventsHost) Deliver(_ context.Context, m messages.HostMessage) {
	if h.panicDeliver.CompareAndSwap(true, false) {
		h.sig.Notify()
		panic("the host's Deliver failed")
	}
	h.mu.Lock()
	h.delivered = append(h.delivered, m)
	h.mu.Unlock()
	h.sig.Notify()
}

func (h *eventsHost) Notify(_ context.Context, n messages.Notice) {
	h.mu.Lock()
	h.notices = append(h.notices, n)
	h.mu.Unlock()
	h.sig.Notify()
}

func (h *eventsHost) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.delivered)
}

func (h *eventsHost) wait(ctx context.Context, t *testing.T, n int) messages.HostMessage {
	t.Helper()
	var m messages.HostMessage
	until(ctx, t, &h.sig, fmt.Sprintf("delivery %d", n), func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.delivered) >= n {
			m = h.delivered[n-1]
			return true
		}
		return false
	})
	return m
}

// eventsWorld is a runtime with one events server, "ev".
type eventsWorld struct {
	t    *testing.T
	ctx  context.Context
	clk  *testClock
	host *eventsHost
	rt   *mcprt.Runtime
	ev   mcprt.Tool
	mcp  mcprt.Tool
}

func newEventsWorld(t *testing.T, srv config.Server) *eventsWorld {
	return newEventsWorldWith(t, srv, mcprt.Options{})
}

// newEventsWorldWith is newEventsWorld with opts (its mcprt.Host, Clock, Rand
// and Config are the world's).
func newEventsWorldWith(t *testing.T, srv config.Server, opts mcprt.Options) *eventsWorld {
	w := &eventsWorld{t: t, ctx: testCtx(t), clk: newTestClock(), host: &eventsHost{}}
	sim := simseam.Get(opts.Sim)
	sim.Clock, sim.Rand = w.clk, clock.NewSeededRand(11)
	opts.Host, opts.Sim = w.host, &sim
	opts.Config = &config.File{MCPServers: map[string]config.Server{"ev": srv}}
	rt, err := mcprt.Start(w.ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	w.rt = rt
	t.Cleanup(func() { _ = rt.Close() })
	var ok bool
	if w.ev, ok = rt.Tool(mcprt.EventsToolName); !ok {
		t.Fatal("no mcp_events tool")
	}
	w.mcp, _ = rt.Tool(mcprt.MCPToolName)
	return w
}

func (w *eventsWorld) events(args string) map[string]any {
	w.t.Helper()
	res := w.ev.Execute(w.ctx, json.RawMessage(args))
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil {
		w.t.Fatalf("mcp_events %s: text is not JSON: %q", args, res.Text)
	}
	if res.IsError {
		out["isError"] = true
	}
	return out
}

func (w *eventsWorld) tool(name, args string) string {
	w.t.Helper()
	res := w.mcp.Execute(w.ctx, json.RawMessage(fmt.Sprintf(`{"tool":%q,"server":"ev","args":%s}`, name, args)))
	if res.IsError {
		w.t.Fatalf("%s: %s", name, res.Text)
	}
	return res.Text
}

// flush waits for a batch window to be armed from mark and lets it pass;
// it returns the mark just past that window's timer (not the clock's
// mark after the advance: a window armed while it advanced would be
// missed).
func (w *eventsWorld) flush(mark int) int {
	w.t.Helper()
	next := w.clk.WaitArmed(w.ctx, w.t, mark, eventstream.DefaultBatchWindow)
	w.clk.Advance(eventstream.DefaultBatchWindow)
	return next
}

// collect lets batch windows pass until n events have been delivered
// (they may arrive over more than one window), returning their ids and
// the status wakeups seen meanwhile.
func (w *eventsWorld) collect(mark, n int) (ids []string, statuses []messages.HostMessage) {
	w.t.Helper()
	seen := w.host.count()
	for len(ids) < n {
		mark = w.flush(mark)
		m := w.host.wait(w.ctx, w.t, seen+1)
		seen++
		if m.Kind == "mcp-events-status" {
			statuses = append(statuses, m)
			continue
		}
		got, _ := wakeEvents(w.t, m)
		ids = append(ids, got...)
	}
	return ids, statuses
}

// wakeEvents decodes an events wakeup.
func wakeEvents(t *testing.T, m messages.HostMessage) (ids []string, dropped float64) {
	t.Helper()
	var body struct {
		Events []struct {
			Event struct {
				EventID string `json:"eventId"`
			} `json:"event"`
		} `json:"events"`
		Dropped float64 `json:"dropped_events"`
	}
	decodeWake(t, m, "mcp-events", &body)
	for _, e := range body.Events {
		ids = append(ids, e.Event.EventID)
	}
	return ids, body.Dropped
}

func eventsServers(t *testing.T) map[string]func(t *testing.T) config.Server {
	return map[string]func(t *testing.T) config.Server{
		"stdio": func(t *testing.T) config.Server {
			return config.Server{Command: testenv.Self(t), Env: testenv.TestServerEnv("--events --events-heartbeat-ms 0")}
		},
		"http": func(t *testing.T) config.Server {
			url, _ := testenv.StartTestServer(t, "--http 127.0.0.1:0 --events --events-heartbeat-ms 0")
			return config.Server{URL: url}
		},
	}
}

func TestEventsEndToEnd(t *testing.T) {
	for name, srv := range eventsServers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newEventsWorld(t, srv(t))

			cat := w.events(`{"action":"catalog","server":"ev"}`)
			if !strings.Contains(fmt.Sprint(cat["events"]), ts.EventTest) {
				t.Fatalf("catalog: %v", cat)
			}
			bad := w.events(`{"action":"subscribe","server":"ev","name":"` + ts.EventPollOnly + `"}`)
			if bad["isError"] != true || !strings.Contains(fmt.Sprint(bad["error"]), "poll") {
				t.Fatalf("a poll-only event: %v", bad)
			}

			sub := w.events(`{"action":"subscribe","server":"ev","name":"` + ts.EventTest + `","arguments":{"tag":"x"}}`)
			s, _ := sub["subscription"].(map[string]any)
			if s == nil || s["status"] != "active" {
				t.Fatalf("subscribe: %v", sub)
			}
			id := s["id"].(string)
			again := w.events(`{"action":"subscribe","server":"ev","name":"` + ts.EventTest + `","arguments":{"tag":"x"}}`)
			if again["subscription"].(map[string]any)["id"] != id {
				t.Fatalf("an identical subscribe was not reused: %v", again)
			}

			// Three events wake the model once, after the batch window.
			mark := w.clk.Mark()
			w.tool("events_emit", `{"name":"`+ts.EventTest+`","data":{"tag":"other"}}`) // filtered out by the server
			w.tool("events_emit", `{"name":"`+ts.EventTest+`","count":3,"data":{"tag":"x"}}`)
			ids, statuses := w.collect(mark, 3)
			if len(ids) != 3 || len(statuses) != 0 {
				t.Fatalf("first events: %v, statuses %v", ids, statuses)
			}

			// Duplicates are not delivered again: only the new event is.
			mark = w.clk.Mark()
			w.tool("events_fault", `{"fault":"duplicate","count":2}`)
			w.tool("events_emit", `{"name":"`+ts.EventTest+`","data":{"tag":"x"}}`)
			ids2, _ := w.collect(mark, 1)
			if len(ids2) != 1 || ids2[0] == ids[1] || ids2[0] == ids[2] {
				t.Fatalf("after duplicates: %v (first %v)", ids2, ids)
			}
			mark = w.clk.Mark()
			w.tool("events_emit", `{"name":"`+ts.EventTest+`","data":{"tag":"x"}}`)
			if ids3, _ := w.collect(mark, 1); len(ids3) != 1 || ids3[0] == ids2[0] {
				t.Fatalf("a duplicate was delivered: %v then %v", ids2, ids3)
			}

			list := w.events(`{"action":"list"}`)
			subs, _ := list["subscriptions"].([]any)
			if len(subs) != 1 || subs[0].(map[string]any)["status"] != "active" {
				t.Fatalf("list: %v", list)
			}
			if got := w.events(`{"action":"unsubscribe","subscription_id":"` + id + `"}`); got["stopped"] != true {
				t.Fatalf("unsubscribe: %v", got)
			}
			if got := w.events(`{"action":"list"}`); len(got["subscriptions"].([]any)) != 0 {
				t.Fatalf("list after unsubscribe: %v", got)
			}
			n := w.host.count()
			if err := w.rt.Close(); err != nil {
				t.Fatal(err)
			}
			if w.host.count() != n {
				t.Fatal("a wakeup after unsubscribe and shutdown")
			}
		})
	}
}

// A lost connection wakes the model once (reconnecting), the retry after
// 1 s reconnects (a new server process) and the subscription, with the
// same id, delivers what is published next, once each.
func TestEventsRecoverAfterDisconnect(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	s := w.subscribe(ts.EventTest, "", "")
	w.emit(ts.EventTest, 2, "")
	w.wantEvents(map[string]int{s.ID: 2})

	mark := w.clk.Mark()
	w.tool("events_fault", `{"fault":"disconnect"}`) // the server process exits
	if st := w.nextStatus(); len(st) != 1 || st[0].ID != s.ID || st[0].Status != eventstream.StateReconnecting {
		t.Fatalf("the interruption's wakeup: %+v", st)
	}
	w.clk.WaitArmed(w.ctx, t, mark, time.Second) // the first retry
	active := func() bool { return w.list()[s.ID].Status == eventstream.StateActive }
	// Let the retry fall due. If it finds the old connection not yet
	// known to be gone, it fails and the next one is armed: let that fall
	// due too, until the stream is acknowledged.
	for delay := time.Second; !active(); delay *= 2 {
		if delay > 16*time.Second {
			t.Fatal("the subscription did not become active again")
		}
		m := w.clk.Mark()
		w.clk.Advance(delay)
		poll(w.ctx, t, "the retry's outcome", func() bool { return active() || w.clk.ArmedSince(m, 2*delay) })
	}
	w.emit(ts.EventTest, 2, "")
	w.wantEvents(map[string]int{s.ID: 2})
	w.wantQuiet("recovery confirmed by events")
}

// A burst far larger than a stream's window (StreamWindow frames in
// flight) goes through without a queue growing: the reader waits for the
// consumer. One batch takes what fits (256 items) and counts the rest as
// dropped_events, so delivered + dropped is the whole burst.
func TestEventsBurstIsBoundedAndCounted(t *testing.T) {
	t.Parallel()
	srv := config.Server{Command: testenv.Self(t), Env: testenv.TestServerEnv("--events --events-heartbeat-ms 0 --events-retention 5000")}
	w := newEventsWorld(t, srv)
	if sub := w.events(`{"action":"subscribe","server":"ev","name":"` + ts.EventTest + `"}`); sub["subscription"] == nil {
		t.Fatalf("subscribe: %v", sub)
	}
	const burst = 1000
	mark := w.clk.Mark()
	w.tool("events_emit", fmt.Sprintf(`{"name":%q,"count":%d}`, ts.EventTest, burst))
	w.clk.WaitArmed(w.ctx, t, mark, eventstream.DefaultBatchWindow)
	// Every frame has reached the subscription once its cursor is the
	// burst's last: the test server's cursors are base64url JSON
	// [epoch, name, sequence].
	poll(w.ctx, t, "the whole burst handled", func() bool {
		subs, _ := w.events(`{"action":"list"}`)["subscriptions"].([]any)
		if len(subs) != 1 {
			return false
		}
		c, _ := subs[0].(map[string]any)["cursor"].(string)
		raw, err := base64.RawURLEncoding.DecodeString(c)
		var parts []any
		return err == nil && json.Unmarshal(raw, &parts) == nil && len(parts) == 3 && parts[2] == float64(burst)
	})
	w.clk.Advance(eventstream.DefaultBatchWindow)
	ids, dropped := wakeEvents(t, w.host.wait(w.ctx, t, 1))
	if len(ids) != 256 || len(ids)+int(dropped) != burst {
		t.Fatalf("delivered %d, dropped %v, want 256 + %d", len(ids), dropped, burst-256)
	}
}
