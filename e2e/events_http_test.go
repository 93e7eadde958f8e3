package e2e

import (
	"strings"
	"testing"

	"github.com/mcprt/mcprt/eventstream"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// events-protocol.md (e), E:test/http-stream.test.mjs and extension 2:
// the events companion over Streamable HTTP, with the 2025-11-25 and the
// 2026-07-28 handshakes, against the test server in a separate process.
// Every stream is its own POST response: cancelling one aborts that
// response, and the runtime never sends notifications/cancelled.
func TestEventsOverHTTP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, handshake, flags string }{
		{"legacy", messages.Protocol20251125, ""},
		{"modern", "", "--modern-only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newEvRig(t, evSetup{http: true, handshake: c.handshake, flags: c.flags})
			a := w.subscribe(ts.EventTest, `{"tag":"a"}`, "")
			b := w.subscribe(ts.EventOther, "", "")
			aOpen, bOpen := w.opens(ts.EventTest)[0], w.opens(ts.EventOther)[0]
			if aOpen.ID == bOpen.ID {
				t.Fatal("two streams, one request id")
			}
			if c.flags != "" {
				if env := w.requests("events/stream")[0].Meta; !strings.Contains(string(env), "io.modelcontextprotocol/protocolVersion") {
					t.Fatalf("a 2026-07-28 stream without the request envelope: %s", env)
				}
			}

			// Two isolated streams: each event reaches its own subscription.
			w.emit(ts.EventTest, 1, `{"tag":"a"}`)
			w.emit(ts.EventOther, 1, "")
			w.wantEvents(map[string]int{a.ID: 1, b.ID: 1})

			// Quiet progress: an occurrence a's filter drops moves the
			// server's position; the heartbeat carries it.
			w.emit(ts.EventTest, 1, `{"tag":"z"}`)
			w.fault(`{"fault":"heartbeat","name":"` + ts.EventTest + `"}`)
			w.waitSeq(a.ID, 2)
			quiet := w.list()[a.ID].Cursor.String()

			// a's response ends without a result: a reconnects with that
			// cursor, under a new request id; b's stream is untouched.
			mark := w.clk.Mark()
			w.fault(`{"fault":"drop","name":"` + ts.EventTest + `"}`)
			st := w.nextStatus()
			if len(st) != 1 || st[0].ID != a.ID || st[0].Status != eventstream.StateReconnecting || st[0].EndReason != messages.EndDisconnected {
				t.Fatalf("the drop's wakeup: %+v", st)
			}
			w.advanceTo(mark, eventstream.DefaultRetryBase)
			w.waitStatus(a.ID, eventstream.StateActive)
			opens := w.opens(ts.EventTest)
			if len(opens) != 2 || opens[1].ID == aOpen.ID || opens[1].Cursor == nil || *opens[1].Cursor != quiet {
				t.Fatalf("the reopen %+v; the heartbeat's cursor %s", opens, quiet)
			}
			if srv := w.serverStreams(); len(srv) != 2 || srv[0].Subscription != bOpen.ID {
				t.Fatalf("b's stream did not survive: %+v", srv)
			}
			w.emit(ts.EventTest, 1, `{"tag":"a"}`)
			w.emit(ts.EventOther, 1, "")
			w.wantEvents(map[string]int{a.ID: 1, b.ID: 1})

			// A gap on a: truncated.
			w.fault(`{"fault":"gap","name":"` + ts.EventTest + `"}`)
			if st := w.nextStatus(); len(st) != 1 || st[0].ID != a.ID || !st[0].Truncated || st[0].Status != eventstream.StateActive {
				t.Fatalf("the gap's wakeup: %+v", st)
			}

			// Unsubscribing b aborts b's response only.
			w.unsubscribe(b.ID)
			w.waitServerStreams(ts.EventOther, 0)

			// terminated fails a at once: the client closes its response,
			// nothing retries, no lease is left.
			mark = w.clk.Mark()
			w.fault(`{"fault":"terminate","code":-32012,"message":"Forbidden"}`)
			if st := w.nextStatus(); len(st) != 1 || st[0].ID != a.ID || st[0].Status != eventstream.StateFailed || st[0].Error != "Forbidden" {
				t.Fatalf("terminated's wakeup: %+v", st)
			}
			w.waitStatus(a.ID, eventstream.StateFailed)
			if w.clk.ArmedSince(mark, eventstream.DefaultRetryBase) {
				t.Fatal("a retry was armed after terminated")
			}
			w.waitServerStreams(ts.EventTest, 0)
			w.waitLeases()

			// A subscribe the server refuses leaves no lease.
			w.tool(ts.ToolEventsArm, `{"fault":"rpc_error","code":-32013,"message":"too many"}`)
			if r := w.subscribeResult(w.ctx, ts.EventTest, `{"tag":"c"}`, ""); !r.IsError || !strings.Contains(r.Text, "too many") {
				t.Fatalf("a refused subscribe: %+v", r)
			}
			w.waitLeases()
			w.wantQuiet("the HTTP scenario")
			if cancels := w.cancels(); len(cancels) != 0 {
				t.Fatalf("notifications/cancelled over Streamable HTTP: %v", cancels)
			}
		})
	}
}

// wantEvents collects events wakeups until want (events per subscription
// id) is met exactly.
func (w *evRig) wantEvents(want map[string]int) {
	w.t.Helper()
	total := 0
	for _, n := range want {
		total += n
	}
	got := map[string]int{}
	for n := 0; n < total; {
		items, _ := eventItems(w.t, w.next())
		for _, it := range items {
			got[it.SubscriptionID]++
			n++
		}
	}
	for id, n := range want {
		if got[id] != n {
			w.t.Fatalf("events per subscription: %v, want %v", got, want)
		}
	}
}
