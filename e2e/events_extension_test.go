package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/eventstream"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
)

// events-protocol.md (e), E:test/extension.test.mjs: the mcp_events tool
// as a model uses it, against the test server in a real process over
// stdio, with the host's deliveries recorded.

// Extension 1: the server's acknowledgement is rendered in the subscribe
// result; an identical subscribe (arguments in another key order) is the
// same subscription and opens no stream; a heartbeat wakes nothing; an
// event wakes the model once, when the 500 ms window has passed, as a
// follow-up that triggers a turn.
func TestEventsSubscribeAckReuseAndOneWake(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	s := w.subscribe(ts.EventTest, `{"tag":"x","reject":false}`, "")
	srv := w.serverStreams()
	if s.Status != eventstream.StateActive || len(srv) != 1 || !srv[0].Active || s.Cursor.String() != srv[0].Cursor || s.Cursor.String() == "" {
		t.Fatalf("the subscribe result %+v does not render the acknowledgement (server %+v)", s, srv)
	}
	if again := w.subscribe(ts.EventTest, `{"reject":false,"tag":"x"}`, `,"cursor":"ignored"`); again.ID != s.ID {
		t.Fatalf("an identical subscribe was not reused: %+v", again)
	}
	if o := w.opens(ts.EventTest); len(o) != 1 {
		t.Fatalf("opens: %+v", o)
	}

	mark := w.clk.Mark()
	w.fault(`{"fault":"heartbeat"}`)
	w.emit(ts.EventTest, 1, `{"tag":"x"}`)
	w.clk.WaitArmed(w.ctx, t, mark, eventstream.DefaultBatchWindow)
	if n := w.host.count(); n != 0 {
		t.Fatalf("%d deliveries before the window passed", n)
	}
	w.clk.Advance(eventstream.DefaultBatchWindow - 1)
	if n := w.host.count(); n != 0 {
		t.Fatalf("%d deliveries before the window passed", n)
	}
	items, _ := eventItems(t, w.next()) // the window ends; the event and nothing for the heartbeat
	if len(items) != 1 || items[0].SubscriptionID != s.ID {
		t.Fatalf("the wakeup: %+v", items)
	}
	w.wantQuiet("a heartbeat")
}

// Extension 1 and 7: shutdown discards a queued events batch and a queued
// status batch: the host is woken by neither, and nothing is listed after.
func TestEventsShutdownSuppressesQueuedBatches(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	w.subscribe(ts.EventTest, "", "")
	w.subscribe(ts.EventOther, "", "")
	mark := w.clk.Mark()
	w.emit(ts.EventTest, 1, "")
	w.fault(`{"fault":"error","name":"` + ts.EventOther + `","message":"upstream down"}`)
	next := w.clk.WaitArmed(w.ctx, t, mark, eventstream.DefaultBatchWindow)
	w.clk.WaitArmed(w.ctx, t, next, eventstream.DefaultBatchWindow) // both batchers hold an item
	if err := w.rt.Close(); err != nil {
		t.Fatal(err)
	}
	w.clk.Advance(eventstream.DefaultBatchWindow)
	if n := w.host.count(); n != 0 {
		t.Fatalf("%d deliveries after shutdown", n)
	}
	if got := w.events(`{"action":"list"}`); len(got["subscriptions"].([]any)) != 0 {
		t.Fatalf("list after shutdown: %v", got)
	}
}

// Extension 5: an upstream notifications/events/error wakes the model
// once per changed message while the subscription stays active, with a
// notice each time; a repeated identical message wakes nothing.
func TestEventsRepeatedErrorWakesOnce(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	s := w.subscribe(ts.EventTest, "", "")
	w.fault(`{"fault":"error","message":"poll failed"}`)
	w.fault(`{"fault":"error","message":"poll failed"}`)
	w.fault(`{"fault":"error","message":"rate limited"}`)
	var errs []string
	for len(errs) < 2 {
		for _, st := range w.nextStatus() {
			if st.ID != s.ID || st.Status != eventstream.StateActive {
				t.Fatalf("an error's wakeup: %+v", st)
			}
			errs = append(errs, st.Error)
		}
	}
	if strings.Join(errs, "|") != "poll failed|rate limited" {
		t.Fatalf("wakeups for %q", errs)
	}
	if got := w.list()[s.ID]; got.Status != eventstream.StateActive || got.Error != "rate limited" {
		t.Fatalf("after the errors: %+v", got)
	}
	w.host.mu.Lock()
	notices := fmt.Sprint(w.host.notices)
	w.host.mu.Unlock()
	if strings.Count(notices, "poll failed") != 1 || strings.Count(notices, "rate limited") != 1 {
		t.Fatalf("notices: %s", notices)
	}
	w.wantQuiet("a repeated error")
}

// Extension 4: unsubscribe answers {stopped: true}, for an unknown id
// too, and wakes nothing.
func TestEventsUnsubscribeAnswers(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	s := w.subscribe(ts.EventTest, "", "")
	w.unsubscribe(s.ID)
	w.unsubscribe("sub-unknown")
	w.waitServerStreams(ts.EventTest, 0)
	w.wantQuiet("unsubscribe")
}

// The runtime records at most 100 subscriptions (ended and failed ones
// count until unsubscribed); the 101st subscribe is refused before any
// send, and an unsubscribe makes room.
func TestEventsSubscriptionLimit(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{})
	var first string
	for i := 0; i < 100; i++ {
		s := w.subscribe(ts.EventTest, fmt.Sprintf(`{"tag":"t%d"}`, i), "")
		if i == 0 {
			first = s.ID
		}
	}
	w.fault(`{"fault":"end","subscription":` + jsonString(w.opens(ts.EventTest)[0].ID) + `}`)
	w.waitStatus(first, eventstream.StateEnded)
	r := w.subscribeResult(w.ctx, ts.EventTest, `{"tag":"t100"}`, "")
	if !r.IsError || !strings.Contains(r.Text, "at most 100") {
		t.Fatalf("the 101st subscribe: %+v", r)
	}
	if o := w.opens(ts.EventTest); len(o) != 100 {
		t.Fatalf("%d opens", len(o))
	}
	w.unsubscribe(first)
	if s := w.subscribe(ts.EventTest, `{"tag":"t100"}`, ""); s.Status != eventstream.StateActive {
		t.Fatalf("after an unsubscribe: %+v", s)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The catalog is fetched fresh and whole on every catalog call, following
// nextCursor; more than 100 pages is an error.
func TestEventsCatalogPagination(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		pageSize     int
		extra, pages int
		err          string
	}{
		{"154 events on 52 pages", 3, 150, 52, ""},
		{"101 pages", 1, 97, 100, "pagination"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newEvRig(t, evSetup{flags: fmt.Sprintf("--events-page-size %d --events-extra-types %d", c.pageSize, c.extra)})
			for round := 1; round <= 2; round++ {
				cat := w.events(`{"action":"catalog","server":"ev"}`)
				if lists := w.requests("events/list"); len(lists) != round*c.pages {
					t.Fatalf("round %d: %d events/list", round, len(lists))
				}
				if c.err != "" {
					if cat["isError"] != true || !strings.Contains(fmt.Sprint(cat["error"]), c.err) {
						t.Fatalf("catalog: %v", cat)
					}
					continue
				}
				if evs, _ := cat["events"].([]any); len(evs) != 4+c.extra {
					t.Fatalf("catalog of %d events", len(evs))
				}
			}
		})
	}
}

// mcprt.Stream 2 and issue 6 item 4, end to end: what does not fit a batch (here
// 2 items) is dropped and counted; an event over 24,000 bytes arrives with
// its data replaced by a preview.
func TestEventsBatchLimits(t *testing.T) {
	t.Parallel()
	w := newEvRig(t, evSetup{opts: mcprt.Options{Sim: &simseam.Seams{EventBatch: eventstream.BatchLimits{MaxItems: 2}}}})
	s := w.subscribe(ts.EventTest, "", "")
	w.emit(ts.EventTest, 3, "")
	w.waitSeq(s.ID, 3) // all three in the batcher before the window ends
	ids, dropped := wakeEvents(t, w.next())
	if len(ids) != 2 || dropped != 1 {
		t.Fatalf("a window of 3 events: %v, dropped %v", ids, dropped)
	}
	w.tool(ts.ToolEventsEmit, `{"name":"`+ts.EventTest+`","size":30000}`)
	items, _ := eventItems(t, w.next())
	var data struct {
		Truncated          bool   `json:"truncated"`
		OriginalCharacters int    `json:"original_characters"`
		Preview            string `json:"preview"`
	}
	if len(items) != 1 || json.Unmarshal(items[0].Event.Data, &data) != nil || !data.Truncated ||
		data.OriginalCharacters < 30000 || len(data.Preview) > eventstream.PreviewChars || !strings.HasPrefix(data.Preview, `{"n":1,"padding":"ppp`) {
		t.Fatalf("a 30,000-byte event: %+v %+v", items, data)
	}
}

// waitSeq waits until subscription id's cursor is at occurrence seq of
// the test server's log (its cursors are base64url JSON [epoch, name,
// seq]): the subscription has handled the frame that carried it, and what
// it delivered is in the batcher's mailbox.
func (w *evRig) waitSeq(id string, seq int) {
	w.t.Helper()
	poll(w.ctx, w.t, fmt.Sprintf("cursor at %d", seq), func() bool {
		raw, err := base64.RawURLEncoding.DecodeString(w.list()[id].Cursor.String())
		var c []any
		return err == nil && json.Unmarshal(raw, &c) == nil && len(c) == 3 && c[2] == float64(seq)
	})
}

// Routing 11 (the session arriving after shutdown) and extension 7:
// shutdown while a subscribe waits for its server's connection (a server
// that never answers its handshake) fails that subscribe, returns, and
// wakes nothing; the connection that was still being made is dropped.
func TestEventsShutdownDuringConnect(t *testing.T) {
	t.Parallel()
	w := &evRig{eventsWorld: newEventsWorldWith(t, config.Server{Command: "sleep", Args: []string{"600"}}, mcprt.Options{})}
	res := make(chan mcprt.Result, 1)
	go func() { res <- w.subscribeResult(w.ctx, ts.EventTest, "", "") }()
	poll(w.ctx, t, "the connect", func() bool { return w.status().State == messages.StateConnecting })
	mark := w.clk.Mark()
	closed := make(chan error, 1)
	go func() { closed <- w.rt.Close() }()
	w.advanceTo(mark, 2*time.Second) // sleep ignores the end of its stdin: SIGTERM after the grace period
	// sleep dies of the SIGTERM and Close returns: nothing else needs the
	// clock. (Advancing it while waiting raced the child's real exit
	// against ShutdownTimeout on the manual clock: on a loaded machine the
	// timeout won.) The test's deadline is the hang guard.
	var cerr error
	select {
	case cerr = <-closed:
	case <-w.ctx.Done():
		t.Fatal("Close did not return after the child's grace period")
	}
	if cerr != nil {
		t.Fatal(cerr)
	}
	if r := <-res; !r.IsError || !strings.Contains(r.Text, "shutting down") {
		t.Fatalf("subscribe: %+v", r)
	}
	w.clk.Advance(time.Minute)
	if n := w.host.count(); n != 0 {
		t.Fatalf("%d deliveries", n)
	}
}
