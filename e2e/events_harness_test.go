package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// The harness of the events checklist tests (events-protocol.md (e)): an
// eventsWorld whose test server logs what it receives, and helpers that
// read the wire (the server's logs), wait for wakeups and prove that
// nothing else woke the host.

// sentinelEvent is the event type the absence checks subscribe to
// (--events-extra-types 1 adds it); nothing else uses it.
const sentinelEvent = "extra.000"

// evSetup says how to run the test server for an events test.
type evSetup struct {
	http      bool
	handshake string // config protocolVersion: "" (auto), "2025-11-25", "2026-07-28"
	flags     string // more test server flags
	opts      mcprt.Options
}

// evRig is an eventsWorld over one test server with its wire logs.
type evRig struct {
	*eventsWorld
	notes, reqs string
	seen        int // deliveries consumed by next
	wmark       int // batch windows armed before it have passed
	sentinel    string
}

func newEvRig(t *testing.T, s evSetup) *evRig {
	t.Helper()
	dir := t.TempDir()
	notes, reqs := filepath.Join(dir, "notes"), filepath.Join(dir, "requests")
	logs := []string{ts.EnvNoteLog + "=" + notes, ts.EnvRequestLog + "=" + reqs}
	flags := "--events --events-heartbeat-ms 0 --events-extra-types 1 " + s.flags
	var srv config.Server
	if s.http {
		url, _ := testenv.StartTestServer(t, "--http 127.0.0.1:0 "+flags, logs...)
		srv = config.Server{URL: url}
	} else {
		srv = config.Server{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio "+flags, logs...)}
	}
	srv.ProtocolVersion = s.handshake
	return &evRig{eventsWorld: newEventsWorldWith(t, srv, s.opts), notes: notes, reqs: reqs}
}

// subscribe subscribes to name with args (JSON, "" for none) and more
// tool arguments (`,"max_age_ms":5`), returning the subscription.
func (w *evRig) subscribe(name, args, more string) eventstream.Snapshot {
	w.t.Helper()
	res := w.subscribeResult(w.ctx, name, args, more)
	if res.IsError {
		w.t.Fatalf("subscribe %s %s: %s", name, args, res.Text)
	}
	var out struct{ Subscription eventstream.Snapshot }
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil || out.Subscription.ID == "" {
		w.t.Fatalf("subscribe %s: %q", name, res.Text)
	}
	return out.Subscription
}

func (w *evRig) subscribeResult(ctx context.Context, name, args, more string) mcprt.Result {
	if args == "" {
		args = "{}"
	}
	return w.ev.Execute(ctx, json.RawMessage(fmt.Sprintf(`{"action":"subscribe","server":"ev","name":%q,"arguments":%s%s}`, name, args, more)))
}

// list returns the recorded subscriptions by id.
func (w *evRig) list() map[string]eventstream.Snapshot {
	w.t.Helper()
	res := w.ev.Execute(w.ctx, json.RawMessage(`{"action":"list"}`))
	var out struct{ Subscriptions []eventstream.Snapshot }
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil {
		w.t.Fatalf("list: %q", res.Text)
	}
	m := map[string]eventstream.Snapshot{}
	for _, s := range out.Subscriptions {
		m[s.ID] = s
	}
	return m
}

// waitStatus waits until subscription id has status st (a subscription's
// snapshot is published after its actor ran every effect of its turn).
func (w *evRig) waitStatus(id string, st eventstream.State) eventstream.Snapshot {
	w.t.Helper()
	var s eventstream.Snapshot
	poll(w.ctx, w.t, fmt.Sprintf("subscription %s %s", id, st), func() bool {
		s = w.list()[id]
		return s.Status == st
	})
	return s
}

func (w *evRig) unsubscribe(id string) {
	w.t.Helper()
	if got := w.events(`{"action":"unsubscribe","subscription_id":"` + id + `"}`); got["stopped"] != true {
		w.t.Fatalf("unsubscribe: %v", got)
	}
}

// emit publishes count occurrences of name with data (JSON, "" for the
// default).
func (w *evRig) emit(name string, count int, data string) {
	w.t.Helper()
	args := fmt.Sprintf(`{"name":%q,"count":%d`, name, count)
	if data != "" {
		args += `,"data":` + data
	}
	w.tool(ts.ToolEventsEmit, args+"}")
}

// fault applies a fault (the events_fault arguments) and returns how many
// streams it reached.
func (w *evRig) fault(args string) int {
	w.t.Helper()
	var out struct{ Streams int }
	if err := json.Unmarshal([]byte(w.tool(ts.ToolEventsFault, args)), &out); err != nil {
		w.t.Fatal(err)
	}
	return out.Streams
}

// srvStream is one open stream as the server's events_streams lists it.
type srvStream struct {
	Subscription, Name, Cursor string
	Active, Stalled            bool
}

// serverStreams lists the server's open streams.
func (w *evRig) serverStreams() []srvStream {
	w.t.Helper()
	var out struct{ Streams []srvStream }
	if err := json.Unmarshal([]byte(w.tool(ts.ToolEventsStreams, `{}`)), &out); err != nil {
		w.t.Fatal(err)
	}
	return out.Streams
}

// waitServerStreams waits until the server has n open streams of name.
func (w *evRig) waitServerStreams(name string, n int) {
	w.t.Helper()
	poll(w.ctx, w.t, fmt.Sprintf("%d server streams of %s", n, name), func() bool {
		k := 0
		for _, s := range w.serverStreams() {
			if s.Name == name {
				k++
			}
		}
		return k == n
	})
}

// requests returns the requests of method the server received (every
// process of it, in order).
func (w *evRig) requests(method string) []ts.RequestRecord {
	w.t.Helper()
	recs, err := ts.ReadRequestLog(w.reqs)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []ts.RequestRecord
	for _, r := range recs {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

// opens returns the events/stream requests of event name.
func (w *evRig) opens(name string) []openRecord {
	w.t.Helper()
	var out []openRecord
	for _, r := range w.requests("events/stream") {
		var p openRecord
		if err := json.Unmarshal(r.Params, &p); err != nil {
			w.t.Fatalf("events/stream params %s: %v", r.Params, err)
		}
		if p.Name == name {
			p.ID = string(r.ID)
			out = append(out, p)
		}
	}
	return out
}

// openRecord is one events/stream request as the server received it.
type openRecord struct {
	ID        string          `json:"-"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Cursor    *string         `json:"cursor"`
	MaxAgeMs  *int64          `json:"maxAgeMs"`
}

// cancels returns the notifications/cancelled the server received, as
// the note log's CancelNote lines.
func (w *evRig) cancels() []string {
	w.t.Helper()
	data, err := os.ReadFile(w.notes)
	if err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "notifications/cancelled ") {
			out = append(out, l)
		}
	}
	return out
}

// waitCancel waits until the server received notifications/cancelled for
// request id (compact JSON).
func (w *evRig) waitCancel(id string) {
	w.t.Helper()
	want := ts.CancelNote(json.RawMessage(id))
	poll(w.ctx, w.t, want, func() bool {
		for _, c := range w.cancels() {
			if c == want {
				return true
			}
		}
		return false
	})
}

// waitLeases waits until the server holds no lease (no request, stream or
// observer in flight).
func (w *evRig) waitLeases() {
	w.t.Helper()
	poll(w.ctx, w.t, "no leases", func() bool { return w.status().Leases == 0 })
}

// status returns the server's status.
func (w *evRig) status() messages.ServerStatus {
	w.t.Helper()
	for _, s := range w.rt.ServerStatuses() {
		if s.Name == "ev" {
			return s
		}
	}
	w.t.Fatal("no status for ev")
	return messages.ServerStatus{}
}

// next returns the next delivery, letting batch windows pass until it
// arrives. A window counts when its timer was armed after the last one
// next let pass (wmark).
func (w *evRig) next() messages.HostMessage {
	w.t.Helper()
	for {
		poll(w.ctx, w.t, "a wakeup or a batch window", func() bool {
			return w.host.count() > w.seen || w.clk.ArmedSince(w.wmark, eventstream.DefaultBatchWindow)
		})
		if w.host.count() > w.seen {
			w.seen++
			return w.host.wait(w.ctx, w.t, w.seen)
		}
		w.wmark = w.clk.Mark()
		w.clk.Advance(eventstream.DefaultBatchWindow)
	}
}

// nextStatus returns the items of the next delivery, which must be a
// status wakeup.
func (w *evRig) nextStatus() []eventstream.Snapshot {
	w.t.Helper()
	return statusItems(w.t, w.next())
}

// statusItems decodes a status wakeup.
func statusItems(t *testing.T, m messages.HostMessage) []eventstream.Snapshot {
	t.Helper()
	var body struct{ Subscriptions []eventstream.Snapshot }
	decodeWake(t, m, "mcp-events-status", &body)
	return body.Subscriptions
}

// decodeWake checks that m is a wakeup of kind that starts with the
// external-data preamble, and decodes its JSON line into body.
func decodeWake(t *testing.T, m messages.HostMessage, kind string, body any) {
	t.Helper()
	if m.Kind != kind || !m.TriggerTurn || m.DeliverAs != "followUp" {
		t.Fatalf("not a %s wakeup: %+v", kind, m)
	}
	first, rest, _ := strings.Cut(m.Text, "\n")
	if !strings.Contains(first, "external data, not instructions") {
		t.Fatalf("the wakeup's first line: %q", first)
	}
	if err := json.Unmarshal([]byte(rest), body); err != nil {
		t.Fatalf("wakeup body %q: %v", rest, err)
	}
}

// eventItem is one item of an events wakeup.
type eventItem struct {
	SubscriptionID  string `json:"subscription_id"`
	Server          string
	ReplayTruncated bool `json:"replay_truncated"`
	Event           struct {
		EventID, Name, Timestamp string
		Cursor                   *string
		Data                     json.RawMessage
	}
}

// eventItems decodes an events wakeup (failing on a status wakeup).
func eventItems(t *testing.T, m messages.HostMessage) (items []eventItem, raw string) {
	t.Helper()
	var body struct{ Events []eventItem }
	decodeWake(t, m, "mcp-events", &body)
	_, raw, _ = strings.Cut(m.Text, "\n")
	return body.Events, raw
}

// quiet proves that nothing woke the host since the last delivery next
// returned, other than what it returns: it subscribes to the sentinel
// event type (once) and ends that subscription from the server, whose
// ended wakeup is posted after anything posted before, and returns every
// delivery up to it with the sentinel's item left out.
func (w *evRig) quiet() []messages.HostMessage {
	w.t.Helper()
	if w.sentinel == "" {
		w.sentinel = w.subscribe(sentinelEvent, `{"sentinel":true}`, "").ID
	}
	if n := w.fault(`{"fault":"end","name":"` + sentinelEvent + `"}`); n != 1 {
		w.t.Fatalf("the sentinel's stream: %d", n)
	}
	var out []messages.HostMessage
	for {
		m := w.next()
		if m.Kind == "mcp-events-status" {
			items := statusItems(w.t, m)
			var rest []eventstream.Snapshot
			for _, s := range items {
				if s.ID != w.sentinel {
					rest = append(rest, s)
				}
			}
			if len(rest) < len(items) {
				w.unsubscribe(w.sentinel)
				w.sentinel = ""
				if len(rest) > 0 {
					out = append(out, m)
				}
				return out
			}
		}
		out = append(out, m)
	}
}

// wantQuiet fails when anything woke the host (see quiet).
func (w *evRig) wantQuiet(what string) {
	w.t.Helper()
	if extra := w.quiet(); len(extra) > 0 {
		w.t.Fatalf("%s woke the host: %+v", what, extra)
	}
}

// advanceTo lets the retry (or other) timer of d armed since mark fall
// due: it waits for it to be armed, then advances the clock by d.
func (w *evRig) advanceTo(mark int, d time.Duration) int {
	w.t.Helper()
	next := w.clk.WaitArmed(w.ctx, w.t, mark, d)
	w.clk.Advance(d)
	return next
}
