package eventstream

import (
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// TestRecoveryScripts covers interruption, reconnects, the retry budget,
// the watchdog and recovery episodes.
func TestRecoveryScripts(t *testing.T) {
	lost := func(stream uint64) func(*harness) string {
		return ended(stream, messages.EndDisconnected, "connection lost")
	}
	tests := []struct {
		name  string
		spec  Spec
		lim   Limits
		steps []step
	}{
		{name: "watchdog loss reopens with the latest cursor and max_age_ms; same id; dedupe across streams",
			spec: Spec{Cursor: CursorOf("seed"), MaxAgeMs: i64(60000)},
			steps: []step{
				{start(), "open #1 cursor=seed maxAgeMs=60000; arm activation 15s"},
				{active(1, `{"cursor":"c0"}`), ackDone},
				{event(1, "e1", "c1"), "deliver e1"},
				{wait(65 * time.Second), `cancel #1; wake reconnecting disconnected "event stream heartbeat timed out"; notify "event stream heartbeat timed out"; arm retry 1s`},
				{wait(time.Second), "open #2 cursor=c1 maxAgeMs=60000 retry=1; arm activation 15s"},
				{event(1, "e-old", "cx"), ""},
				{active(2, `{"cursor":"c1"}`), "arm watchdog 1m5s"},
				{event(2, "e1", "c1b"), ""},
				{event(2, "e2", "c2"), "deliver e2"},
				{check(func(h *harness) {
					st := h.s.Stats()
					if st.Duplicates != 1 || st.Late != 1 || st.Opens != 2 || st.Delivered != 2 {
						t.Errorf("stats %+v", st)
					}
					for _, it := range h.delivered {
						if it.SubscriptionID != "sub-1" {
							t.Errorf("item of %q", it.SubscriptionID)
						}
					}
				}), ""},
			}},
		{name: "transport loss: one wake, reopen, heartbeat confirms recovery with one wake",
			steps: []step{
				{reopened(), ""},
				{active(2, `{"cursor":"c0"}`), "arm watchdog 1m5s"},
				{heartbeat(2, `{"cursor":"c3"}`), "wake active"},
				{heartbeat(2, `{"cursor":"c4"}`), ""},
			}},
		{name: "a heartbeat's cursor (quiet progress) is the one reopened with",
			spec: Spec{MaxAgeMs: i64(0)},
			steps: []step{
				{start(), "open #1 cursor=null maxAgeMs=0; arm activation 15s"},
				{active(1, `{"cursor":"c0"}`), ackDone},
				{heartbeat(1, `{"cursor":"quiet-progress"}`), ""},
				{lost(1), `wake reconnecting disconnected "connection lost"; notify "connection lost"; arm retry 1s`},
				{wait(time.Second), "open #2 cursor=quiet-progress maxAgeMs=0 retry=1; arm activation 15s"},
			}},
		{name: "recovery confirmed by an event is told by the event's own batch",
			steps: []step{
				{reopened(), ""},
				{active(2, `{"cursor":"c0"}`), "arm watchdog 1m5s"},
				{event(2, "e1", "c1"), "deliver e1"},
				{heartbeat(2, `{"cursor":"c3"}`), ""},
			}},
		{name: "unsubscribe during recovery cancels the pending retry",
			steps: []step{
				{start(), open1},
				{active(1, `{"cursor":"c0"}`), ackDone},
				{lost(1), "wake reconnecting disconnected \"connection lost\"; notify \"connection lost\"; arm retry 1s"},
				{cancel(), "disarm retry"},
				{wait(time.Minute), ""},
				{check(func(h *harness) {
					if h.s.State() != StateStopped || h.s.Stats().Opens != 1 {
						t.Errorf("state %s stats %+v", h.s.State(), h.s.Stats())
					}
				}), ""},
			}},
		{name: "unsubscribe while a reopened stream awaits its ack cancels it",
			steps: []step{
				{reopened(), ""},
				{cancel(), "cancel #2; disarm activation"},
			}},
		{name: "retry exhaustion with maxRetries 2: 3 opens, wakes reconnecting then failed",
			lim: Limits{MaxRetries: 2},
			steps: []step{
				{reopened(), ""},
				{lost(2), "arm retry 2s"},
				{wait(2 * time.Second), "open #3 cursor=c0 retry=2; arm activation 15s"},
				{lost(3), `disarm activation; wake failed error "reconnect attempts exhausted: connection lost"; notify "reconnect attempts exhausted: connection lost"`},
				{check(func(h *harness) {
					if h.s.Stats().Opens != 3 || h.count("wake") != 2 {
						t.Errorf("opens %d wakes %d", h.s.Stats().Opens, h.count("wake"))
					}
				}), ""},
			}},
		{name: "the default budget: retries after 1, 2, 4, 8, 16 s, 6 opens, activation timeouts count",
			steps: []step{
				{reopened(), ""},
				{wait(15 * time.Second), "cancel #2; arm retry 2s"},
				{wait(2 * time.Second), "open #3 cursor=c0 retry=2; arm activation 15s"},
				{wait(15 * time.Second), "cancel #3; arm retry 4s"},
				{wait(4 * time.Second), "open #4 cursor=c0 retry=3; arm activation 15s"},
				{wait(15 * time.Second), "cancel #4; arm retry 8s"},
				{wait(8 * time.Second), "open #5 cursor=c0 retry=4; arm activation 15s"},
				{wait(15 * time.Second), "cancel #5; arm retry 16s"},
				{wait(16 * time.Second), "open #6 cursor=c0 retry=5; arm activation 15s"},
				{wait(15 * time.Second), `cancel #6; wake failed error "reconnect attempts exhausted: event stream activation timed out"; notify "reconnect attempts exhausted: event stream activation timed out"`},
				{check(func(h *harness) {
					if h.s.Stats().Opens != 6 || h.count("wake") != 2 {
						t.Errorf("opens %d wakes %d", h.s.Stats().Opens, h.count("wake"))
					}
				}), ""},
			}},
		{name: "acknowledge-then-drop loops still exhaust the budget",
			lim: Limits{MaxRetries: 2},
			steps: []step{
				{reopened(), ""},
				{active(2, `{"cursor":"c0"}`), "arm watchdog 1m5s"},
				{lost(2), "arm retry 2s"},
				{wait(2 * time.Second), "open #3 cursor=c0 retry=2; arm activation 15s"},
				{active(3, `{"cursor":"c0"}`), "arm watchdog 1m5s"},
				{lost(3), `disarm watchdog; wake failed error "reconnect attempts exhausted: connection lost"; notify "reconnect attempts exhausted: connection lost"`},
			}},
		{name: "a valid event resets the budget: a new episode wakes again and starts at 1 s",
			lim: Limits{MaxRetries: 2},
			steps: []step{
				{reopened(), ""},
				{active(2, `{"cursor":"c0"}`), "arm watchdog 1m5s"},
				{event(2, "e1", "c1"), "deliver e1"},
				{lost(2), "wake reconnecting disconnected \"connection lost\"; notify \"connection lost\"; arm retry 1s"},
				{wait(time.Second), "open #3 cursor=c1 retry=1; arm activation 15s"},
			}},
		{name: "ack/gap flapping during retries: wakes reconnecting and failed, one gap notice",
			lim: Limits{MaxRetries: 2},
			steps: []step{
				{reopened(), ""},
				{active(2, `{"cursor":"g1","truncated":true}`), `arm watchdog 1m5s; notify "replay is truncated for fs.changed; some events are unavailable"`},
				{lost(2), "arm retry 2s"},
				{wait(2 * time.Second), "open #3 cursor=g1 retry=2; arm activation 15s"},
				{active(3, `{"cursor":"g2","truncated":true}`), "arm watchdog 1m5s"},
				{lost(3), `disarm watchdog; wake failed truncated error "reconnect attempts exhausted: connection lost"; notify "reconnect attempts exhausted: connection lost"`},
				{check(func(h *harness) {
					if h.count("wake") != 2 || h.count(`notify "replay`) != 1 {
						t.Errorf("wakes %d gap notices %d", h.count("wake"), h.count(`notify "replay`))
					}
				}), ""},
			}},
		{name: "a gap during recovery is folded: no wake; recovered events carry replay_truncated",
			steps: []step{
				{reopened(), ""},
				{active(2, `{"cursor":"g1","truncated":true}`), `arm watchdog 1m5s; notify "replay is truncated for fs.changed; some events are unavailable"`},
				{event(2, "e1", "c1"), "deliver e1 replay_truncated"},
				{active(2, `{"cursor":"c2"}`), ""},
				{event(2, "e2", "c3"), "deliver e2"},
			}},
		{name: "a second interruption in one episode does not wake again",
			steps: []step{
				{reopened(), ""},
				{ended(2, messages.EndError, "send failed"), "arm retry 2s"},
				{check(func(h *harness) {
					if s := h.s.Snapshot(); s.Error != "send failed" || s.EndReason != messages.EndError || s.Status != StateReconnecting {
						t.Errorf("snapshot %+v", s)
					}
				}), ""},
			}},
		{name: "a final result while reconnecting ends and wakes",
			steps: []step{
				{reopened(), ""},
				{ended(2, messages.EndEnded, ""), "disarm activation; wake ended ended"},
			}},
		{name: "a JSON-RPC error on reopen is terminal",
			steps: []step{
				{reopened(), ""},
				{rpcError(2, -32602, "stale cursor"), `disarm activation; wake failed error "stale cursor"; notify "stale cursor"`},
			}},
		{name: "no budget: the first interruption fails",
			lim: Limits{MaxRetries: -1},
			steps: []step{
				{start(), open1},
				{active(1, `{"cursor":"c0"}`), ackDone},
				{lost(1), `disarm watchdog; wake failed error "reconnect attempts exhausted: connection lost"; notify "reconnect attempts exhausted: connection lost"`},
			}},
		{name: "the watchdog is reset only by valid events and heartbeats",
			steps: []step{
				{start(), open1},
				{active(1, `{"cursor":"c0"}`), ackDone},
				{wait(30 * time.Second), ""},
				{event(1, "e1", "c1"), "deliver e1"},
				{wait(20 * time.Second), ""},
				{frame(1, MethodEvent, `{"eventId":"bad","name":"other","timestamp":"t","data":1}`), ""},
				{frame(1, MethodEvent, `{"eventId":"bad","name":"fs.changed","timestamp":"t"}`), ""},
				{active(1, `{"cursor":"c0"}`), ""},
				{frame(1, MethodError, `{"error":{"code":1,"message":"upstream"}}`), `wake active "upstream"; notify "upstream"`},
				{wait(15 * time.Second), "arm watchdog 30s"},
				{wait(30*time.Second - 1), ""},
				{wait(1), `cancel #1; wake reconnecting disconnected "event stream heartbeat timed out"; notify "event stream heartbeat timed out"; arm retry 1s`},
				{check(func(h *harness) {
					if h.s.Stats().Invalid != 2 {
						t.Errorf("stats %+v", h.s.Stats())
					}
				}), ""},
			}},
		{name: "a duplicate advances the cursor and the watchdog but is not delivered",
			steps: []step{
				{start(), open1},
				{active(1, `{"cursor":"c0"}`), ackDone},
				{event(1, "e1", "c1"), "deliver e1"},
				{wait(60 * time.Second), ""},
				{event(1, "e1", "c2"), ""},
				{wait(60 * time.Second), "arm watchdog 1m0s"},
				{check(func(h *harness) {
					if c := h.s.Snapshot().Cursor.String(); c != "c2" {
						t.Errorf("cursor %s", c)
					}
				}), ""},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newHarness(t, tt.spec, tt.lim).run(tt.steps)
		})
	}
}
