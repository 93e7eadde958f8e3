package eventsrv

import (
	"strings"
	"testing"
	"time"
)

func TestList(t *testing.T) {
	types := append(basicTypes(), Type{Name: "p", Delivery: []string{DeliveryPoll}, InputSchema: map[string]any{"type": "object", "required": []string{"x"}}})
	withServer(t, Options{}, types, func(h *harness) {
		h.request(`1`, MethodList, `{}`)
		h.expect("", `result 1 {"events":[{"name":"a","description":"type a","delivery":["push"],"inputSchema":{"type":"object"}},{"name":"b","delivery":["push"],"inputSchema":{"type":"object"}},{"name":"p","delivery":["poll"],"inputSchema":{"required":["x"],"type":"object"}}]}`)
	})
	withServer(t, Options{}, basicTypes()[1:], func(h *harness) {
		h.request(`1`, MethodList, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
		h.expect("", `result 1 {"events":[{"name":"b","delivery":["push"],"inputSchema":{"type":"object"}}],"resultType":"complete"}`)
		h.open(`2`, `{"name":"b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
		h.inject(Fault{Kind: FaultEnd})
		h.expect(`2`, `active @0`, `result 2 {"resultType":"complete"}`)
	})
	withServer(t, Options{PageSize: 2}, types, func(h *harness) {
		h.request(`1`, MethodList, `null`)
		h.expect("", `result 1 {"events":[{"name":"a","description":"type a","delivery":["push"],"inputSchema":{"type":"object"}},{"name":"b","delivery":["push"],"inputSchema":{"type":"object"}}],"nextCursor":"Mg"}`)
		h.request(`2`, MethodList, `{"cursor":"Mg"}`)
		h.expect("", `result 2 {"events":[{"name":"p","delivery":["poll"],"inputSchema":{"required":["x"],"type":"object"}}]}`)
		h.request(`3`, MethodList, `{"cursor":"Mw"}`)
		h.expect("", `rpc-error 3 -32602 "events/list: unknown cursor"`)
	})
}

func TestStreamRefusals(t *testing.T) {
	types := append(basicTypes(), Type{Name: "p", Delivery: []string{DeliveryPoll}})
	withServer(t, Options{MaxStreams: 1}, types, func(h *harness) {
		for _, tc := range []struct{ params, want string }{
			{`[]`, `-32602 "events/stream params must be an object"`},
			{`{"name":""}`, `-32602 "events/stream: name must be a non-empty string"`},
			{`{"name":"a","arguments":[1]}`, `-32602 "events/stream: arguments must be an object"`},
			{`{"name":"a","cursor":5}`, `-32602 "events/stream: cursor must be a string or null"`},
			{`{"name":"a","maxAgeMs":-1}`, `-32602 "events/stream: maxAgeMs must be an integer ≥ 0"`},
			{`{"name":"a","maxAgeMs":1.5}`, `-32602 "events/stream: maxAgeMs must be an integer ≥ 0"`},
			{`{"name":"a","arguments":{"bad":true}}`, `-32602 "events/stream: arguments of a: bad is bad"`},
			{`{"name":"a","cursor":"garbage!"}`, `-32602 "events/stream: the cursor is not one of this server's"`},
			{`{"name":"a","cursor":"` + h.cursor("b", 0) + `"}`, `-32602 "events/stream: the cursor belongs to event type \"b\""`},
			{`{"name":"zz"}`, `-32011 "unknown event type zz"`},
			{`{"name":"p"}`, `-32014 "p is not delivered by push"`},
		} {
			h.open(`"x"`, tc.params)
			h.expect(`"x"`, `rpc-error "x" `+tc.want)
		}
		h.open(`1`, `{"name":"a","cursor":null}`)
		h.expect(`1`, `active @0`)
		h.open(`2`, `{"name":"b"}`)
		h.expect(`1`, `rpc-error 2 -32013 "too many event streams"`)
	})
}

func TestStreamLive(t *testing.T) {
	withServer(t, Options{}, basicTypes(), func(h *harness) {
		h.publish("a", map[string]int{"n": 1})
		h.open(`"s"`, `{"name":"a","arguments":{"even":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
		h.expect(`"s"`, `active @1`)
		for n := 2; n <= 5; n++ {
			h.publish("a", map[string]int{"n": n})
		}
		h.publish("b", map[string]int{"n": 6})
		h.expect(`"s"`,
			`event "evt_E_2" "a" {"n":2} @2`,
			`event "evt_E_4" "a" {"n":4} @4`)
		h.clk.Advance(DefaultHeartbeat)
		h.expect(`"s"`, `heartbeat @5`)
		h.clk.Advance(DefaultHeartbeat - time.Second)
		h.expect(`"s"`)
		h.clk.Advance(time.Second)
		h.expect(`"s"`, `heartbeat @5`)
		h.cancel(`"s"`)
		h.publish("a", map[string]int{"n": 8})
		h.clk.Advance(DefaultHeartbeat)
		h.expect(`"s"`)
		if n := len(h.srv.Streams()); n != 0 {
			h.t.Fatalf("%d streams after the cancel", n)
		}
	})
}

func TestStreamTimestamps(t *testing.T) {
	withServer(t, Options{}, basicTypes(), func(h *harness) {
		h.open(`1`, `{"name":"b"}`)
		h.expect(`1`, `active @0`)
		h.clk.Advance(1500 * time.Millisecond)
		h.publish("b", "x")
		lines := h.raw()
		if len(lines) != 1 || !strings.Contains(lines[0], `"timestamp":"2026-01-01T00:00:01.5Z"`) {
			h.t.Fatalf("frames %q", lines)
		}
	})
}

func TestStreamReplay(t *testing.T) {
	withServer(t, Options{MaxEvents: 3}, basicTypes(), func(h *harness) {
		for n := 1; n <= 2; n++ {
			h.publish("a", map[string]int{"n": n})
		}
		c1 := h.cursor("a", 1)
		h.open(`1`, `{"name":"a","cursor":"`+c1+`"}`)
		h.expect(`1`, `active @1`, `event "evt_E_2" "a" {"n":2} @2`)
		h.cancel(`1`)

		for n := 3; n <= 6; n++ { // retention keeps 4..6: 1..3 are gone
			h.publish("a", map[string]int{"n": n})
		}
		h.open(`2`, `{"name":"a","cursor":"`+c1+`","arguments":{"even":true}}`)
		h.expect(`2`, `active @1`, `active @3 truncated`,
			`event "evt_E_4" "a" {"n":4} @4`,
			`event "evt_E_6" "a" {"n":6} @6`)
		h.cancel(`2`)

		// Caught up exactly at the floor: nothing was lost.
		h.open(`3`, `{"name":"a","cursor":"`+h.cursor("a", 3)+`"}`)
		h.expect(`3`, `active @3`, `event "evt_E_4" "a" {"n":4} @4`, `event "evt_E_5" "a" {"n":5} @5`, `event "evt_E_6" "a" {"n":6} @6`)
		h.cancel(`3`)

		// A cursor beyond the newest occurrence starts at the newest.
		h.open(`4`, `{"name":"a","cursor":"`+h.cursor("a", 99)+`"}`)
		h.publish("a", map[string]int{"n": 7})
		h.expect(`4`, `active @99`, `event "evt_E_7" "a" {"n":7} @7`)
		h.cancel(`4`)

		// A cursor of another epoch replays what is retained, truncated.
		other := cursor{epoch: "old", name: "a", seq: 6}.String()
		h.open(`5`, `{"name":"a","cursor":"`+other+`"}`)
		h.expect(`5`, `active cursor=`+other, `active @4 truncated`,
			`event "evt_E_5" "a" {"n":5} @5`, `event "evt_E_6" "a" {"n":6} @6`, `event "evt_E_7" "a" {"n":7} @7`)
	})
}

func TestStreamMaxAge(t *testing.T) {
	withServer(t, Options{MaxEvents: 3}, basicTypes(), func(h *harness) {
		for n := 1; n <= 5; n++ { // at 0, 10, 20, 30, 40 s; retained: 3..5
			h.publish("a", map[string]int{"n": n})
			h.clk.Advance(10 * time.Second)
		}
		// Now 50 s. maxAgeMs 25 s: from 25 s on, so 4 and 5; 3 (20 s) is
		// skipped, and it matched: truncated.
		h.open(`1`, `{"name":"a","cursor":"`+h.cursor("a", 2)+`","maxAgeMs":25000}`)
		h.expect(`1`, `active @2`, `active @3 truncated`, `event "evt_E_4" "a" {"n":4} @4`, `event "evt_E_5" "a" {"n":5} @5`)
		h.cancel(`1`)
		// The skipped one does not match (odd): not truncated; the dropped
		// ones (1, 2 at 0 and 10 s) are older than the window anyway.
		h.open(`2`, `{"name":"a","cursor":"`+h.cursor("a", 0)+`","maxAgeMs":25000,"arguments":{"even":true}}`)
		h.expect(`2`, `active @0`, `event "evt_E_4" "a" {"n":4} @4`)
		h.cancel(`2`)
		// A window that reaches back over dropped occurrences is truncated.
		h.open(`3`, `{"name":"a","cursor":"`+h.cursor("a", 0)+`","maxAgeMs":45000}`)
		h.expect(`3`, `active @0`, `active @2 truncated`, `event "evt_E_3" "a" {"n":3} @3`, `event "evt_E_4" "a" {"n":4} @4`, `event "evt_E_5" "a" {"n":5} @5`)
		h.cancel(`3`)
		// From now, maxAgeMs replays nothing.
		h.open(`4`, `{"name":"a","maxAgeMs":100000}`)
		h.expect(`4`, `active @5`)
	})
}

func TestStreamRetentionByAge(t *testing.T) {
	withServer(t, Options{MaxAge: time.Minute}, basicTypes(), func(h *harness) {
		h.publish("b", 1)
		h.clk.Advance(2 * time.Minute)
		h.publish("b", 2)
		h.open(`1`, `{"name":"b","cursor":"`+h.cursor("b", 0)+`"}`)
		h.expect(`1`, `active @0`, `active @1 truncated`, `event "evt_E_2" "b" 2 @2`)
	})
}

// TestSlowStreamGap: occurrences retention drops before a stalled stream
// sent them are a gap it announces when it goes on.
func TestSlowStreamGap(t *testing.T) {
	withServer(t, Options{MaxEvents: 2}, basicTypes(), func(h *harness) {
		h.open(`1`, `{"name":"b"}`)
		h.expect(`1`, `active @0`)
		h.inject(Fault{Kind: FaultStall})
		for n := 1; n <= 4; n++ {
			h.publish("b", n)
		}
		h.clk.Advance(DefaultHeartbeat)
		h.expect(`1`)
		h.inject(Fault{Kind: FaultResume})
		h.expect(`1`, `active @2 truncated`, `event "evt_E_3" "b" 3 @3`, `event "evt_E_4" "b" 4 @4`)
	})
}

// TestWatch: a type's source starts with its first stream, before that
// stream's position is taken, and stops after the last.
func TestWatch(t *testing.T) {
	var srv *Server
	running := 0
	typ := Type{Name: "w", Watch: func() func() {
		running++
		_, _ = srv.Publish("w", "found at start")
		return func() { running-- }
	}}
	withServer(t, Options{}, []Type{typ}, func(h *harness) {
		srv = h.srv
		h.open(`1`, `{"name":"w"}`)
		h.expect(`1`, `active @1`)
		h.open(`2`, `{"name":"w","cursor":"`+h.cursor("w", 0)+`"}`)
		h.expect(`2`, `active @0`, `event "evt_E_1" "w" "found at start" @1`)
		if running != 1 {
			h.t.Fatalf("running %d", running)
		}
		h.cancel(`1`)
		h.cancel(`2`)
		h.raw()
		if running != 0 {
			h.t.Fatalf("running %d after the last stream", running)
		}
	})
}
