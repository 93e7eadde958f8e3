package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/eventstream"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
)

// events-protocol.md (e), E:test/routing.test.mjs items 8 to 12: recovery
// against the test server in a real process over stdio, every timer on
// the runtime's manual clock.

// Routing 8: a stream that falls silent is lost when the 65 s watchdog
// fires (one wakeup, the old stream cancelled on the wire); the retry
// reopens it after 1 s with a new request id, the latest cursor and the
// original maxAgeMs, for the same subscription id; the dedupe window
// survives the new stream.
func TestEventsWatchdogReopens(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	start := w.clk.Mark()
	s := w.subscribe(ts.EventTest, "", `,"max_age_ms":60000`)
	w.tool(ts.ToolEventsEmit, `{"name":"`+ts.EventTest+`","eventId":"ev-1"}`)
	items, _ := eventItems(t, w.next())
	if len(items) != 1 || items[0].Event.EventID != "ev-1" {
		t.Fatalf("first event: %+v", items)
	}
	latest := *items[0].Event.Cursor

	w.fault(`{"fault":"stall"}`) // no events, no heartbeats
	mark := w.clk.Mark()
	w.advanceTo(start, eventstream.DefaultHeartbeatTimeout)
	st := w.nextStatus()
	if len(st) != 1 || st[0].ID != s.ID || st[0].Status != eventstream.StateReconnecting || !strings.Contains(st[0].Error, "heartbeat") {
		t.Fatalf("the loss's wakeup: %+v", st)
	}
	first := w.opens(ts.EventTest)[0]
	w.waitCancel(first.ID)

	w.advanceTo(mark, eventstream.DefaultRetryBase)
	w.waitStatus(s.ID, eventstream.StateActive)
	opens := w.opens(ts.EventTest)
	if len(opens) != 2 {
		t.Fatalf("opens: %+v", opens)
	}
	re := opens[1]
	if re.ID == first.ID || re.Cursor == nil || *re.Cursor != latest || re.MaxAgeMs == nil || *re.MaxAgeMs != 60000 ||
		first.MaxAgeMs == nil || *first.MaxAgeMs != 60000 || first.Cursor != nil {
		t.Fatalf("first open %+v, reopen %+v; latest cursor %s", first, re, latest)
	}

	// ev-1 again on the new stream is a duplicate; ev-2 is new. Recovery
	// confirmed by an event is told by the event's own batch.
	w.tool(ts.ToolEventsEmit, `{"name":"`+ts.EventTest+`","eventId":"ev-1"}`)
	w.tool(ts.ToolEventsEmit, `{"name":"`+ts.EventTest+`","eventId":"ev-2"}`)
	items, _ = eventItems(t, w.next())
	if len(items) != 1 || items[0].Event.EventID != "ev-2" || items[0].SubscriptionID != s.ID {
		t.Fatalf("after the reopen: %+v", items)
	}
	w.wantQuiet("recovery confirmed by an event")
}

// Routing 9: a lost connection wakes once; unsubscribing while the retry
// is pending cancels that retry: nothing reconnects or reopens.
func TestEventsUnsubscribeDuringRecovery(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	s := w.subscribe(ts.EventTest, "", "")
	mark := w.clk.Mark()
	w.fault(`{"fault":"disconnect"}`) // the server process exits
	if st := w.nextStatus(); len(st) != 1 || st[0].Status != eventstream.StateReconnecting {
		t.Fatalf("the loss's wakeup: %+v", st)
	}
	w.clk.WaitArmed(w.ctx, t, mark, eventstream.DefaultRetryBase)
	w.unsubscribe(s.ID)
	w.clk.WaitNotPending(w.ctx, t, mark, eventstream.DefaultRetryBase)
	w.clk.Advance(time.Minute)
	if len(w.list()) != 0 {
		t.Fatalf("list: %v", w.list())
	}
	w.wantQuiet("unsubscribe during recovery") // connects again, for the sentinel
	if o, hs := w.opens(ts.EventTest), w.handshakes(); len(o) != 1 || hs != 2 {
		t.Fatalf("opens %+v, handshakes %d (the sentinel's is the second)", o, hs)
	}
}

// waitOpens waits until the server received n events/stream requests
// of name.
func (w *evRig) waitOpens(name string, n int) {
	w.t.Helper()
	poll(w.ctx, w.t, fmt.Sprintf("%d opens of %s", n, name), func() bool { return len(w.opens(name)) >= n })
}

// handshakes counts the connections the server accepted (initialize or
// server/discover requests).
func (w *evRig) handshakes() int {
	return len(w.requests("initialize")) + len(w.requests("server/discover"))
}

// Routing 10: retries exhausted (a budget of 2: 3 opens; the reopens'
// acknowledgements held back until their activation timeouts) fail the
// subscription: exactly two wakeups, reconnecting then failed.
func TestEventsRetryExhaustion(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{opts: mcprt.Options{Sim: &simseam.Seams{Events: eventstream.Limits{MaxRetries: 2}}}})
	start := w.clk.Mark()
	s := w.subscribe(ts.EventTest, "", "")
	w.tool(ts.ToolEventsArm, `{"fault":"stall","times":2}`)
	w.fault(`{"fault":"stall"}`)
	mark := w.clk.Mark()
	w.advanceTo(start, eventstream.DefaultHeartbeatTimeout)
	if st := w.nextStatus(); len(st) != 1 || st[0].Status != eventstream.StateReconnecting {
		t.Fatalf("the loss's wakeup: %+v", st)
	}
	for i, delay := range []time.Duration{time.Second, 2 * time.Second} {
		m := w.advanceTo(mark, delay)
		w.waitOpens(ts.EventTest, 2+i) // the reopen, its ack held back
		w.waitServerStreams(ts.EventTest, 1)
		mark = w.clk.Mark()
		w.advanceTo(m, eventstream.DefaultActivationTimeout)
	}
	st := w.nextStatus()
	if len(st) != 1 || st[0].ID != s.ID || st[0].Status != eventstream.StateFailed || !strings.Contains(st[0].Error, "exhausted") {
		t.Fatalf("the exhaustion's wakeup: %+v", st)
	}
	opens := w.opens(ts.EventTest)
	if len(opens) != 3 {
		t.Fatalf("opens: %+v", opens)
	}
	for _, o := range opens {
		w.waitCancel(o.ID)
	}
	w.waitLeases()
	w.wantQuiet("exhaustion")
}

// Routing 11: two subscriptions of one server lose their connection
// together; their retries share one reconnect (one new server process)
// and both are active again, with their ids, and receive events.
func TestEventsParallelSubscriptionsShareOneReconnect(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	a := w.subscribe(ts.EventTest, `{"tag":"a"}`, "")
	b := w.subscribe(ts.EventTest, `{"tag":"b"}`, "")
	mark := w.clk.Mark()
	w.fault(`{"fault":"disconnect","subscription":` + strconv.Quote(w.opens(ts.EventTest)[0].ID) + `}`) // the process exits
	got := map[string]eventstream.State{}
	for len(got) < 2 {
		for _, s := range w.nextStatus() {
			got[s.ID] = s.Status
		}
	}
	if got[a.ID] != eventstream.StateReconnecting || got[b.ID] != eventstream.StateReconnecting {
		t.Fatalf("the loss's wakeups: %v", got)
	}
	w.clk.WaitArmed(w.ctx, t, w.clk.WaitArmed(w.ctx, t, mark, time.Second), time.Second) // both retries
	w.waitGone()
	w.clk.Advance(time.Second)
	w.waitStatus(a.ID, eventstream.StateActive)
	w.waitStatus(b.ID, eventstream.StateActive)
	if hs := w.handshakes(); hs != 2 {
		t.Fatalf("%d handshakes: the retries did not share one reconnect", hs)
	}
	w.emit(ts.EventTest, 1, `{"tag":"a"}`)
	w.emit(ts.EventTest, 1, `{"tag":"b"}`)
	per := map[string]int{}
	for n := 0; n < 2; {
		items, _ := eventItems(t, w.next())
		for _, it := range items {
			per[it.SubscriptionID]++
			n++
		}
	}
	if per[a.ID] != 1 || per[b.ID] != 1 {
		t.Fatalf("after the reconnect: %v", per)
	}
	w.wantQuiet("recovery")
}

// waitGone waits until the runtime knows the server's connection ended.
func (w *evRig) waitGone() {
	w.t.Helper()
	poll(w.ctx, w.t, "the connection to end", func() bool { return w.status().State != messages.StateConnected })
}

// Routing 12: every reopen is acknowledged, then reports a gap, then is
// lost again (over Streamable HTTP, whose server outlives its streams):
// the budget still runs out (only events and heartbeats reset it), the
// model is woken exactly twice (reconnecting, failed) and the user sees
// one gap notice.
func TestEventsAckGapFlapping(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{http: true, opts: mcprt.Options{Sim: &simseam.Seams{Events: eventstream.Limits{MaxRetries: 2}}}})
	s := w.subscribe(ts.EventTest, "", "")
	w.tool(ts.ToolEventsArm, `{"fault":"gap","phase":"after_active","times":2}`)
	w.tool(ts.ToolEventsArm, `{"fault":"drop","phase":"after_active","times":2}`)
	mark := w.clk.Mark()
	w.fault(`{"fault":"drop"}`) // the response ends
	if st := w.nextStatus(); len(st) != 1 || st[0].Status != eventstream.StateReconnecting {
		t.Fatalf("the loss's wakeup: %+v", st)
	}
	m := w.advanceTo(mark, time.Second)
	w.waitServerStreams(ts.EventTest, 0) // the reopen came and went
	w.advanceTo(m, 2*time.Second)
	st := w.nextStatus()
	if len(st) != 1 || st[0].ID != s.ID || st[0].Status != eventstream.StateFailed || !strings.Contains(st[0].Error, "exhausted") {
		t.Fatalf("the exhaustion's wakeup: %+v", st)
	}
	if o := w.opens(ts.EventTest); len(o) != 3 {
		t.Fatalf("opens: %+v", o)
	}
	w.wantQuiet("flapping")
	gaps := 0
	w.host.mu.Lock()
	for _, n := range w.host.notices {
		if strings.Contains(n.Text, "replay is truncated") {
			gaps++
		}
	}
	w.host.mu.Unlock()
	if gaps != 1 {
		t.Fatalf("%d gap notices", gaps)
	}
}
