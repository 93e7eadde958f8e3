package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"

	"github.com/mcprt/mcprt/eventstream"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
)

// events-protocol.md (e), E:test/routing.test.mjs: the subscription's
// life against the test server in a real process (stdio unless a case
// says otherwise), on the runtime's manual clock.

// Routing 2 and 5: a subscribe fails when the 15 s activation timeout
// fires before the server acknowledged ("timed out"), when its caller
// gives up ("cancelled"), or when the stream ends before its
// acknowledgement: refused with a JSON-RPC error, a final result, the
// server's notifications/cancelled, the server process exiting. The
// stream is cancelled on the wire when it was still open; nothing wakes,
// nothing is recorded, no lease is left.
func TestEventsPendingSubscribeFails(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, arm, want, code string }{
		{"activation_timeout", "stall", "timed out", "disconnected"},
		{"caller_gives_up", "stall", "cancelled by the caller", "aborted"},
		{"refused", `rpc_error","code":-32013,"message":"too many`, "too many (JSON-RPC error -32013)", "protocol_error"},
		{"result", "end", "ended before the server acknowledged", "protocol_error"},
		{"server_cancelled", "cancel", "server cancelled the stream", "protocol_error"},
		{"process_exits", "disconnect", "ev", "disconnected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newEvRig(t, evSetup{})
			w.tool(ts.ToolEventsArm, `{"fault":"`+c.arm+`","name":"`+ts.EventTest+`"}`)
			mark := w.clk.Mark()
			ctx, cancel := context.WithCancel(w.ctx)
			defer cancel()
			res := make(chan mcprt.Result, 1)
			go func() { res <- w.subscribeResult(ctx, ts.EventTest, "", "") }()
			held := c.arm == "stall"
			if held {
				w.waitServerStreams(ts.EventTest, 1) // written, its ack held back
				if c.name == "caller_gives_up" {
					cancel()
				} else {
					w.advanceTo(mark, eventstream.DefaultActivationTimeout)
				}
			}
			if r := <-res; !r.IsError || !strings.Contains(r.Text, c.want) || strings.Count(r.Text, `server \"ev\"`) != 1 || r.ErrorCode() != c.code {
				t.Fatalf("subscribe (want code %s): %+v", c.code, r)
			}
			opens := w.opens(ts.EventTest)
			if len(opens) != 1 {
				t.Fatalf("opens: %+v", opens)
			}
			if held {
				w.waitCancel(opens[0].ID)
			}
			if l := w.list(); len(l) != 0 {
				t.Fatalf("a failed subscribe left %v", l)
			}
			w.waitLeases()
			w.wantQuiet("a failed subscribe")
			w.waitServerStreams(ts.EventTest, 0)
		})
	}
}

// Routing 1: frames are routed by subscription id to their logical
// subscription; heartbeats, invalid frames (wrong name, bad id, no data,
// long timestamp, another subscription id) and duplicates are
// not delivered; _meta and extra fields are stripped; an events frame
// without a subscription id goes to normal MCP handling; unsubscribe
// stops without a wakeup and nothing of its stream is delivered after.
func TestEventsRouting(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	a := w.subscribe(ts.EventTest, `{"tag":"a"}`, "")
	b := w.subscribe(ts.EventTest, `{"tag":"b"}`, "")
	w.emit(ts.EventTest, 2, `{"tag":"a"}`)
	w.emit(ts.EventTest, 1, `{"tag":"b"}`)
	bySub := map[string]int{}
	for n := 0; n < 3; {
		items, raw := eventItems(t, w.next())
		if strings.Contains(raw, "_meta") || strings.Contains(raw, "io.modelcontextprotocol") {
			t.Fatalf("_meta reached the model: %s", raw)
		}
		for _, it := range items {
			tag := map[string]string{a.ID: `"a"`, b.ID: `"b"`}[it.SubscriptionID]
			if tag == "" || !strings.Contains(string(it.Event.Data), `"tag":`+tag) || it.Server != "ev" {
				t.Fatalf("misrouted: %+v (a %s, b %s)", it, a.ID, b.ID)
			}
			bySub[it.SubscriptionID]++
			n++
		}
	}
	if bySub[a.ID] != 2 || bySub[b.ID] != 1 {
		t.Fatalf("per subscription: %v", bySub)
	}

	// On a's stream: a heartbeat, every invalid frame, a frame with no
	// subscription id, a duplicate; then one new event, the only one
	// delivered.
	aStream := w.opens(ts.EventTest)[0].ID
	on := `,"subscription":` + strconv.Quote(aStream)
	w.fault(`{"fault":"heartbeat"` + on + `}`)
	// (A line that is not JSON at all ends a stdio connection: see
	// transports.ErrNotJSON.)
	for _, f := range []string{"event_id_number", "event_id_long", "wrong_name", "no_data", "timestamp_long", "no_subscription", "wrong_subscription"} {
		w.fault(`{"fault":"malformed","frame":"` + f + `"` + on + `}`)
	}
	w.fault(`{"fault":"duplicate","count":2` + on + `}`)
	w.emit(ts.EventTest, 1, `{"tag":"a","last":true}`)
	items, _ := eventItems(t, w.next())
	if len(items) != 1 || items[0].SubscriptionID != a.ID || !strings.Contains(string(items[0].Event.Data), `"last":true`) {
		t.Fatalf("after the noise: %+v", items)
	}
	if s := w.list()[a.ID]; s.Status != eventstream.StateActive || s.Cursor.String() != *items[0].Event.Cursor {
		t.Fatalf("a after the noise: %+v", s)
	}
	// The list action counts them: the five invalid frames that reached
	// a's stream and the two duplicates; three events delivered.
	if st := w.list()[a.ID].Stats; st == nil || *st != (eventstream.Stats{Delivered: 3, Duplicates: 2, Invalid: 5, Opens: 1}) {
		t.Fatalf("a's counters in list: %+v", st)
	}

	// A numeric cursor is no cursor: the event is delivered with null.
	w.fault(`{"fault":"malformed","frame":"cursor_number"` + on + `}`)
	items, _ = eventItems(t, w.next())
	if len(items) != 1 || items[0].Event.EventID != "malformed_cursor_number" || items[0].Event.Cursor != nil {
		t.Fatalf("an event with a numeric cursor: %+v", items)
	}

	// Unsubscribe: stopped, no wakeup, nothing of a's after it.
	w.unsubscribe(a.ID)
	w.waitCancel(aStream)
	w.emit(ts.EventTest, 1, `{"tag":"a"}`)
	w.emit(ts.EventTest, 1, `{"tag":"b"}`)
	items, _ = eventItems(t, w.next())
	if len(items) != 1 || items[0].SubscriptionID != b.ID {
		t.Fatalf("after unsubscribe: %+v", items)
	}
	if _, ok := w.list()[a.ID]; ok {
		t.Fatal("an unsubscribed subscription is still listed")
	}
	w.wantQuiet("unsubscribe")
}

// Routing 3: an unknown event and one without push delivery fail before
// any events/stream is sent.
func TestEventsRefusedBeforeAnySend(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	for name, want := range map[string]string{ts.EventWebhookOnly: "webhook", ts.EventPollOnly: "poll", "no.such.event": "unknown"} {
		r := w.subscribeResult(w.ctx, name, "", "")
		if !r.IsError || !strings.Contains(strings.ToLower(r.Text), want) || !strings.Contains(r.Text, name) {
			t.Fatalf("subscribe %s: %+v", name, r)
		}
	}
	if o := w.requests("events/stream"); len(o) != 0 || len(w.list()) != 0 {
		t.Fatalf("opens %v, list %v", o, w.list())
	}
	if l := w.requests("events/list"); len(l) != 3 {
		t.Fatalf("the catalog is fetched fresh for every subscribe: %d events/list", len(l))
	}
}

// Routing 4, extension 3: the server's final result ends the subscription
// (ended), a JSON-RPC error with a code fails it; either wakes once and
// nothing retries. A lost connection wakes once too (reconnecting), and a
// retry is armed.
func TestEventsStreamEnds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, fault string
		status      eventstream.State
		reason      messages.EndReason
		errText     string
	}{
		{"result", `{"fault":"end"}`, eventstream.StateEnded, messages.EndEnded, ""},
		{"rpc_error", `{"fault":"rpc_error","code":-32012,"message":"Forbidden"}`, eventstream.StateFailed, messages.EndError, "Forbidden"},
		{"disconnected", `{"fault":"disconnect"}`, eventstream.StateReconnecting, messages.EndDisconnected, ""},
		// An error object without a numeric code is an interruption, as
		// in the reference; one whose code is not an integer fails only
		// that stream the same way (the connection stays up).
		{"rpc_error_without_code", `{"fault":"rpc_error","frame":"no_code","message":"no code here"}`, eventstream.StateReconnecting, messages.EndError, "no code here"},
		{"rpc_error_code_not_integer", `{"fault":"rpc_error","code":"x","message":"odd code"}`, eventstream.StateReconnecting, messages.EndError, "odd code"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newEvRig(t, evSetup{})
			s := w.subscribe(ts.EventTest, "", "")
			mark := w.clk.Mark()
			w.fault(c.fault)
			st := w.nextStatus()
			if len(st) != 1 || st[0].ID != s.ID || st[0].Status != c.status || st[0].EndReason != c.reason || !strings.Contains(st[0].Error, c.errText) {
				t.Fatalf("the wakeup: %+v", st)
			}
			w.waitStatus(s.ID, c.status)
			if retry := w.clk.ArmedSince(mark, eventstream.DefaultRetryBase); retry != (c.status == eventstream.StateReconnecting) {
				t.Fatalf("a retry armed: %v", retry)
			}
			if c.status != eventstream.StateReconnecting {
				w.waitLeases()
			}
			w.wantQuiet("a stream's end")
		})
	}
}

// Routing 6: a gap mid-stream (a second active {truncated: true}) moves
// the cursor, wakes once (active, truncated) with a notice, and opens no
// new stream.
func TestEventsGapMidStream(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	s := w.subscribe(ts.EventTest, "", "")
	w.fault(`{"fault":"gap"}`)
	st := w.nextStatus()
	if len(st) != 1 || st[0].ID != s.ID || st[0].Status != eventstream.StateActive || !st[0].Truncated {
		t.Fatalf("the gap's wakeup: %+v", st)
	}
	srv := w.serverStreams()
	if got := w.list()[s.ID]; len(srv) != 1 || got.Cursor.String() != srv[0].Cursor || !got.Truncated {
		t.Fatalf("after the gap: %+v (server %+v)", got, srv)
	}
	if !w.noticed("replay is truncated for " + ts.EventTest) {
		t.Fatalf("no gap notice: %+v", w.host.notices)
	}
	// Events after a gap carry replay_truncated.
	w.emit(ts.EventTest, 1, "")
	items, _ := eventItems(t, w.next())
	if len(items) != 1 || !items[0].ReplayTruncated {
		t.Fatalf("an event after the gap: %+v", items)
	}
	if o := w.opens(ts.EventTest); len(o) != 1 {
		t.Fatalf("a gap opened a stream: %+v", o)
	}
	w.wantQuiet("a gap")
}

// noticed reports whether a host notice contains text.
func (w *evRig) noticed(text string) bool {
	w.host.mu.Lock()
	defer w.host.mu.Unlock()
	for _, n := range w.host.notices {
		if strings.Contains(n.Text, text) {
			return true
		}
	}
	return false
}

// Routing 7, extension 3: terminated (-32012) fails the subscription at
// once with the server's message: one wakeup, the stream cancelled, no
// retry, no lease left.
func TestEventsTerminated(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	s := w.subscribe(ts.EventTest, "", "")
	mark := w.clk.Mark()
	w.fault(`{"fault":"terminate","code":-32012,"message":"Forbidden: access revoked"}`)
	st := w.nextStatus()
	if len(st) != 1 || st[0].ID != s.ID || st[0].Status != eventstream.StateFailed || st[0].Error != "Forbidden: access revoked" {
		t.Fatalf("the wakeup: %+v", st)
	}
	w.waitStatus(s.ID, eventstream.StateFailed)
	if w.clk.ArmedSince(mark, eventstream.DefaultRetryBase) {
		t.Fatal("a retry was armed")
	}
	w.waitCancel(w.opens(ts.EventTest)[0].ID)
	w.waitServerStreams(ts.EventTest, 0)
	w.waitLeases()
	if !w.noticed("Forbidden: access revoked") {
		t.Fatalf("no notice: %+v", w.host.notices)
	}
	w.wantQuiet("terminated")
	if o := w.opens(ts.EventTest); len(o) != 1 {
		t.Fatalf("reopened after terminated: %+v", o)
	}
}
