package eventstream

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

const (
	ackDone  = "arm watchdog 1m5s; resolve active"
	open1    = "open #1 cursor=null; arm activation 15s"
	lostWake = `wake reconnecting disconnected "connection lost"; notify "connection lost"`
)

// TestSubscriptionScripts walks the state machine through
// events-protocol.md (b) and issue 6 item 1, one script per behaviour.
func TestSubscriptionScripts(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		lim   Limits
		steps []step
	}{
		{name: "happy path: ack resolves, events delivered, heartbeats never wake", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{event(1, "e1", "c1"), "deliver e1"},
			{heartbeat(1, `{"cursor":"c2"}`), ""},
			{heartbeat(1, `{}`), ""},
			{check(func(h *harness) {
				if s := h.s.Snapshot(); s.Cursor.String() != "null" || s.Status != StateActive || s.ID != "sub-1" {
					t.Errorf("snapshot %+v", s)
				}
			}), ""},
		}},
		{name: "activation timeout fails without waking and cancels the stream", steps: []step{
			{start(), open1},
			{wait(15*time.Second - 1), ""},
			{wait(1), `cancel #1; reject "event stream activation timed out"`},
			{check(func(h *harness) {
				if s := h.s.Snapshot(); s.Status != StateFailed || s.EndReason != messages.EndDisconnected {
					t.Errorf("snapshot %+v", s)
				}
			}), ""},
			{active(1, `{"cursor":null}`), ""},
		}},
		{name: "final result before the ack ends, rejects, no wake", steps: []step{
			{start(), open1},
			{ended(1, messages.EndEnded, ""), `disarm activation; reject "event stream ended before the server acknowledged it"`},
		}},
		{name: "JSON-RPC error before the ack fails", steps: []step{
			{start(), open1},
			{rpcError(1, -32602, "bad cursor"), `disarm activation; reject "bad cursor"`},
		}},
		{name: "disconnect before the ack fails (no retry before activation)", steps: []step{
			{start(), open1},
			{ended(1, messages.EndDisconnected, "connection lost"), `disarm activation; reject "connection lost"`},
		}},
		{name: "aborting a pending subscribe stops it, no wake", steps: []step{
			{start(), open1},
			{cancel(), `cancel #1; disarm activation; reject "subscription cancelled"`},
			{wait(time.Minute), ""},
		}},
		{name: "terminated before the ack rejects with its message", steps: []step{
			{start(), open1},
			{frame(1, MethodTerminated, `{"error":{"code":-32012,"message":"forbidden"}}`), `cancel #1; disarm activation; reject "forbidden"`},
		}},
		{name: "final result after the ack ends and wakes", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{ended(1, messages.EndEnded, ""), "disarm watchdog; wake ended ended"},
		}},
		{name: "JSON-RPC error with a code after the ack is terminal and wakes", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{rpcError(1, -1, "nope"), `disarm watchdog; wake failed error "nope"; notify "nope"`},
			{wait(time.Hour), ""},
		}},
		{name: "terminated is terminal at once: no retry", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{frame(1, MethodTerminated, `{"error":{"code":-32012,"message":"Forbidden"}}`), `cancel #1; disarm watchdog; wake failed error "Forbidden"; notify "Forbidden"`},
			{wait(time.Hour), ""},
		}},
		{name: "terminated without a message", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{frame(1, MethodTerminated, `{"error":"x"}`), `cancel #1; disarm watchdog; wake failed error "event subscription terminated by the server"; notify "event subscription terminated by the server"`},
		}},
		{name: "unsubscribe while active: stopped, stream cancelled, no wake", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{cancel(), "cancel #1; disarm watchdog"},
			{cancel(), ""},
			{event(1, "late", "c9"), ""},
			{check(func(h *harness) {
				if h.s.State() != StateStopped || h.s.Stats().Late != 1 {
					t.Errorf("state %s stats %+v", h.s.State(), h.s.Stats())
				}
			}), ""},
		}},
		{name: "owner abort fails and wakes once active", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{func(h *harness) string { return h.take(h.s.Abort("session ended")) }, `cancel #1; disarm watchdog; wake failed error "session ended"; notify "session ended"`},
			{func(h *harness) string { return h.take(h.s.Abort("again")) }, ""},
		}},
		{name: "owner abort before the ack rejects", steps: []step{
			{start(), open1},
			{func(h *harness) string { return h.take(h.s.Abort("session ended")) }, `cancel #1; disarm activation; reject "session ended"`},
		}},
		{name: "mid-stream gap: cursor updated, one notice and one wake, no new stream", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{active(1, `{"cursor":"fresh","truncated":true}`), `notify "replay is truncated for fs.changed; some events are unavailable"; wake active truncated`},
			{event(1, "e1", "c1"), "deliver e1 replay_truncated"},
			{heartbeat(1, `{"cursor":null}`), ""},
			{check(func(h *harness) {
				if s := h.s.Snapshot(); !s.Cursor.IsNull() || !s.Truncated || h.s.Stats().Opens != 1 {
					t.Errorf("snapshot %+v stats %+v", s, h.s.Stats())
				}
			}), ""},
		}},
		{name: "a gap without a cursor is not a gap", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{active(1, `{"cursor":null,"truncated":true}`), ""},
		}},
		{name: "upstream error: one wake per changed message while active", steps: []step{
			{start(), open1},
			{frame(1, MethodError, `{"error":{"code":-32603,"message":"poll failed"}}`), ""},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{frame(1, MethodError, `{"error":{"code":-32603,"message":"poll failed"}}`), `wake active "poll failed"; notify "poll failed"`},
			{frame(1, MethodError, `{"error":{"code":-32603,"message":"poll failed"}}`), ""},
			{frame(1, MethodError, `{"error":{"code":-32603,"message":"rate limited"}}`), `wake active "rate limited"; notify "rate limited"`},
			{event(1, "e1", "c1"), "deliver e1"},
			{frame(1, MethodError, `{"error":{"code":-32603,"message":"rate limited"}}`), `wake active "rate limited"; notify "rate limited"`},
			{frame(1, MethodError, `{}`), `wake active "upstream event error"; notify "upstream event error"`},
			{check(func(h *harness) {
				if h.s.State() != StateActive {
					t.Errorf("state %s", h.s.State())
				}
			}), ""},
		}},
		{name: "upstream error while reconnecting is recorded, not woken", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c0"}`), ackDone},
			{ended(1, messages.EndDisconnected, "gone"), `wake reconnecting disconnected "gone"; notify "gone"; arm retry 1s`},
			{wait(time.Second), "open #2 cursor=c0 retry=1; arm activation 15s"},
			{frame(2, MethodError, `{"error":{"message":"still broken"}}`), ""},
			{check(func(h *harness) {
				if s := h.s.Snapshot(); s.Error != "still broken" {
					t.Errorf("snapshot %+v", s)
				}
			}), ""},
		}},
		{name: "events and heartbeats before the ack are invalid", steps: []step{
			{start(), open1},
			{event(1, "e0", "c0"), ""},
			{heartbeat(1, `{"cursor":"h"}`), ""},
			{frame(1, "notifications/events/other", `{}`), ""},
			{frame(1, MethodEvent, `[1]`), ""},
			{active(1, `{"cursor":"c1"}`), ackDone},
			{event(1, "e0", "c2"), "deliver e0"},
			{check(func(h *harness) {
				if st := h.s.Stats(); st.Invalid != 4 || st.Delivered != 1 {
					t.Errorf("stats %+v", st)
				}
			}), ""},
		}},
		{name: "initial gap: notice only, the ack renders truncated", steps: []step{
			{start(), open1},
			{active(1, `{"cursor":"c5","truncated":true}`), `arm watchdog 1m5s; notify "replay is truncated for fs.changed; some events are unavailable"; resolve active truncated`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newHarness(t, tt.spec, tt.lim).run(tt.steps)
		})
	}
}

func TestNewSubscriptionValidates(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		ok   bool
	}{
		{"minimal", Spec{ID: "a", Name: "n"}, true},
		{"max_age_ms 0", Spec{ID: "a", Name: "n", MaxAgeMs: i64(0)}, true},
		{"max_age_ms 2^53-1", Spec{ID: "a", Name: "n", MaxAgeMs: i64(1<<53 - 1)}, true},
		{"max_age_ms 2^53", Spec{ID: "a", Name: "n", MaxAgeMs: i64(1 << 53)}, false},
		{"max_age_ms negative", Spec{ID: "a", Name: "n", MaxAgeMs: i64(-1)}, false},
		{"no name", Spec{ID: "a"}, false},
		{"no id", Spec{Name: "n"}, false},
		{"arguments not an object", Spec{ID: "a", Name: "n", Arguments: []byte(`[1]`)}, false},
		{"arguments object", Spec{ID: "a", Name: "n", Arguments: []byte(` {"k":1}`)}, true},
	}
	for _, tt := range tests {
		_, err := NewSubscription(tt.spec, Limits{})
		if (err == nil) != tt.ok {
			t.Errorf("%s: err %v", tt.name, err)
		}
		if err != nil && !errors.Is(err, ErrSpec) {
			t.Errorf("%s: %v is not ErrSpec", tt.name, err)
		}
	}
}

func TestStartOnceAndSnapshotJSON(t *testing.T) {
	h := newHarness(t, Spec{Arguments: []byte(`{"dir":"/tmp"}`), MaxAgeMs: i64(5)}, Limits{})
	effects := h.s.Start()
	open, ok := effects[0].(OpenStream)
	if !ok {
		t.Fatalf("first effect %v", effects[0])
	}
	params, err := json.Marshal(open.Params)
	if err != nil || string(params) != `{"name":"fs.changed","arguments":{"dir":"/tmp"},"cursor":null,"maxAgeMs":5}` {
		t.Fatalf("params %s %v", params, err)
	}
	if again := h.s.Start(); len(again) != 0 {
		t.Fatalf("second start: %s", render(again))
	}
	h.take(h.s.Frame(h.now, 1, Decode(MethodActive, []byte(`{"cursor":"c1","truncated":true}`))))
	h.take(h.s.StreamEnded(1, messages.End{Reason: messages.EndDisconnected, Error: "gone"}))
	got, _ := json.Marshal(h.s.Snapshot())
	want := `{"id":"sub-1","server":"demo","name":"fs.changed","arguments":{"dir":"/tmp"},"cursor":"c1","status":"reconnecting","maxAgeMs":5,"truncated":true,"error":"gone","endReason":"disconnected"}`
	if string(got) != want {
		t.Fatalf("snapshot\n got  %s\n want %s", got, want)
	}
	none, _ := NewSubscription(Spec{ID: "x", Server: "s", Name: "n"}, Limits{})
	got, _ = json.Marshal(none.Snapshot())
	if string(got) != `{"id":"x","server":"s","name":"n","arguments":{},"cursor":null,"status":"opening"}` {
		t.Fatalf("fresh snapshot %s", got)
	}
}

func TestStaleInputsAreIgnored(t *testing.T) {
	h := newHarness(t, Spec{}, Limits{})
	h.take(h.s.Start())
	old := h.token
	h.take(h.s.Frame(h.now, 1, Decode(MethodActive, []byte(`{"cursor":"c"}`))))
	if got := render(h.s.Fire(h.now.Add(time.Hour), old)); got != "" {
		t.Fatalf("stale activation firing: %s", got)
	}
	if got := render(h.s.StreamEnded(7, messages.End{Reason: messages.EndEnded})); got != "" {
		t.Fatalf("end of an unknown stream: %s", got)
	}
	if got := render(h.s.Frame(h.now, 0, Decode(MethodHeartbeat, []byte(`{}`)))); got != "" || h.s.Stats().Late != 1 {
		t.Fatalf("frame of stream 0: %s %+v", got, h.s.Stats())
	}
}
