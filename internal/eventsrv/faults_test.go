package eventsrv

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestFaultsOnOpenStream walks the faults that leave a stream open.
func TestFaultsOnOpenStream(t *testing.T) {
	withServer(t, Options{}, basicTypes(), func(h *harness) {
		h.open(`"s"`, `{"name":"a"}`)
		h.open(`"o"`, `{"name":"b"}`)
		h.raw()
		inject := func(f Fault) {
			h.t.Helper()
			if n, err := h.srv.Inject(context.Background(), f, Target{Name: "a"}); n != 1 || err != nil {
				h.t.Fatalf("inject %+v: %d, %v", f, n, err)
			}
		}
		h.publish("a", map[string]int{"n": 1})
		inject(Fault{Kind: FaultStall}) // published before the fault: sent before it
		h.expect(`"s"`, `event "evt_E_1" "a" {"n":1} @1`)
		h.publish("a", map[string]int{"n": 2})
		h.clk.Advance(DefaultHeartbeat)
		h.expect(`"s"`, `heartbeat @0 sub="o"`)
		inject(Fault{Kind: FaultHeartbeat})
		h.expect(`"s"`, `heartbeat @1`)
		inject(Fault{Kind: FaultResume})
		h.expect(`"s"`, `event "evt_E_2" "a" {"n":2} @2`)

		inject(Fault{Kind: FaultStall, Ms: 1000})
		h.publish("a", map[string]int{"n": 3})
		h.expect(`"s"`)
		h.clk.Advance(time.Second)
		h.expect(`"s"`, `event "evt_E_3" "a" {"n":3} @3`)

		inject(Fault{Kind: FaultDuplicate, Count: 2})
		h.expect(`"s"`, `event "evt_E_2" "a" {"n":2} @2`, `event "evt_E_3" "a" {"n":3} @3`)
		inject(Fault{Kind: FaultStall})
		h.publish("a", map[string]int{"n": 4})
		inject(Fault{Kind: FaultGap})
		inject(Fault{Kind: FaultResume})
		h.publish("a", map[string]int{"n": 5})
		h.expect(`"s"`, `active @4 truncated`, `event "evt_E_5" "a" {"n":5} @5`)

		inject(Fault{Kind: FaultError})
		inject(Fault{Kind: FaultError, Code: json.RawMessage(`-32001`), Message: "slow upstream", Data: json.RawMessage(`{"retry":true}`)})
		inject(Fault{Kind: FaultListChanged})
		h.expect(`"s"`,
			`error {"code":-32603,"message":"upstream error","data":{"reason":"upstream_error"}}`,
			`error {"code":-32001,"message":"slow upstream","data":{"retry":true}}`,
			`notifications/events/list_changed {} sub=`)

		for _, frame := range MalformedFrames {
			inject(Fault{Kind: FaultMalformed, Frame: frame})
		}
		got := h.trace(`"s"`)
		want := []string{
			`raw {"jsonrpc":"2.0","method":"notifications/events/event","params":{"eventId":`,
			`event 42 "a" {"malformed":"event_id_number"} @5`,
			`event "` + strings.Repeat("e", 1025) + `" "a" {"malformed":"event_id_long"} @5`,
			`event "malformed_wrong_name" "a.other" {"malformed":"wrong_name"} @5`,
			`event "malformed_no_data" "a"  @5`,
			`event "malformed_timestamp_long" "a" {"malformed":"timestamp_long"} @5`,
			`event "malformed_cursor_number" "a" {"malformed":"cursor_number"} cursor=7`,
			`event "malformed_no_subscription" "a" {"malformed":"no_subscription"} @5 sub=`,
			`event "malformed_wrong_subscription" "a" {"malformed":"wrong_subscription"} @5 sub="eventsrv-not-this-stream"`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			h.t.Fatalf("malformed frames:\n%s", strings.Join(got, "\n"))
		}
		inject(Fault{Kind: FaultOversized, Bytes: 10})
		h.expect(`"s"`, `event "oversized_10" "a" "xxxxxxxxxx" @5`)

		inject(Fault{Kind: FaultTerminate})
		h.publish("a", map[string]int{"n": 6})
		h.clk.Advance(DefaultHeartbeat)
		h.expect(`"s"`, `terminated {"code":-32012,"message":"subscription terminated"}`, `heartbeat @0 sub="o"`)
		inject(Fault{Kind: FaultEnd})
		h.expect(`"s"`, `result "s" {}`)
		if infos := h.srv.Streams(); len(infos) != 1 || infos[0].Subscription != `"o"` || !infos[0].Active {
			h.t.Fatalf("streams %+v", infos)
		}
	})
}

// TestFaultsThatEnd: every way a fault ends a stream.
func TestFaultsThatEnd(t *testing.T) {
	for _, tc := range []struct {
		fault Fault
		want  []string
	}{
		{Fault{Kind: FaultEnd}, []string{`result 1 {}`}},
		{Fault{Kind: FaultRPCError}, []string{`rpc-error 1 -32000 "stream failed on purpose"`}},
		{Fault{Kind: FaultRPCError, Code: json.RawMessage(`-32012`), Message: "no", Data: json.RawMessage(`[1]`)}, []string{`rpc-error 1 -32012 "no"`}},
		{Fault{Kind: FaultRPCError, Code: json.RawMessage(`"E_FAIL"`)}, []string{`rpc-error 1 "E_FAIL" "stream failed on purpose"`}},
		{Fault{Kind: FaultRPCError, Frame: "no_code"}, []string{`rpc-error 1  "stream failed on purpose"`}},
		{Fault{Kind: FaultCancel}, []string{`notifications/cancelled {"reason":"the server cancelled the request","requestId":1}`}},
		{Fault{Kind: FaultDrop}, nil},
	} {
		t.Run(tc.fault.Kind+tc.fault.Frame+string(tc.fault.Code), func(t *testing.T) {
			withServer(t, Options{}, basicTypes(), func(h *harness) {
				h.open(`1`, `{"name":"a"}`)
				h.expect(`1`, `active @0`)
				h.inject(tc.fault)
				h.publish("a", 1)
				h.clk.Advance(DefaultHeartbeat)
				h.expect(`1`, tc.want...)
				if n := len(h.srv.Streams()); n != 0 {
					h.t.Fatalf("%d streams left", n)
				}
			})
		})
	}
}

// TestInjectEndingFaultReturnsWhenGone: Inject of a fault that ends a
// stream returns only once the stream is unregistered, so a caller that
// lists the open streams next (events_streams after events_fault) never
// finds it. The type's watch stops slowly here (it is released by the
// test), which holds the stream between its end and its unregistering.
func TestInjectEndingFaultReturnsWhenGone(t *testing.T) {
	var release chan struct{} // made inside the bubble, so a wait on it is durable
	slow := Type{Name: "slow", Watch: func() func() { return func() { <-release } }}
	withServer(t, Options{}, []Type{slow}, func(h *harness) {
		release = make(chan struct{})
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		defer free() // also after a failed check, so the server can end
		h.open(`1`, `{"name":"slow"}`)
		h.expect(`1`, `active @0`)
		returned := make(chan int, 1)
		go func() {
			n, _ := h.srv.Inject(context.Background(), Fault{Kind: FaultDrop}, Target{})
			returned <- n
		}()
		synctest.Wait() // the stream has ended; its watch's stop is blocked
		select {
		case <-returned:
			if n := len(h.srv.Streams()); n != 0 {
				t.Fatalf("Inject returned while %d stream(s) were still listed", n)
			}
		default:
		}
		free()
		if n := <-returned; n != 1 {
			t.Fatalf("Inject reached %d streams", n)
		}
		if n := len(h.srv.Streams()); n != 0 {
			t.Fatalf("%d streams listed after Inject returned", n)
		}
	})
}

// TestDisconnect: the line session ends; the stream's sibling gets no end.
func TestDisconnect(t *testing.T) {
	withServer(t, Options{}, basicTypes(), func(h *harness) {
		h.open(`1`, `{"name":"a"}`)
		h.open(`2`, `{"name":"b"}`)
		h.raw()
		if n, err := h.srv.Inject(context.Background(), Fault{Kind: FaultDisconnect}, Target{Subscription: `1`}); n != 1 || err != nil {
			h.t.Fatalf("inject: %d %v", n, err)
		}
		h.expect(`1`)
		if _, ok := <-h.frames; ok {
			h.t.Fatal("the output goes on after the disconnect")
		}
	})
}

// TestArmedFaults: faults armed for the next opens, before and after the
// acknowledgement.
func TestArmedFaults(t *testing.T) {
	withServer(t, Options{}, basicTypes(), func(h *harness) {
		arm := func(f Fault, phase, name string, times int) {
			h.t.Helper()
			if err := h.srv.Arm(f, phase, name, times); err != nil {
				h.t.Fatal(err)
			}
		}
		arm(Fault{Kind: FaultDrop}, PhaseBeforeActive, "a", 2)
		h.open(`1`, `{"name":"b"}`)
		h.expect(`1`, `active @0`)
		h.open(`2`, `{"name":"a"}`)
		h.open(`3`, `{"name":"a"}`)
		h.expect(`2`)
		h.open(`4`, `{"name":"a"}`)
		h.expect(`4`, `active @0`)

		arm(Fault{Kind: FaultDelay, Ms: 5000}, PhaseBeforeActive, "", 1)
		arm(Fault{Kind: FaultRPCError, Code: json.RawMessage(`-32012`)}, PhaseAfterActive, "", 1)
		h.open(`5`, `{"name":"a"}`)
		h.clk.Advance(4999 * time.Millisecond)
		h.expect(`5`)
		h.clk.Advance(time.Millisecond)
		h.expect(`5`, `active @0`, `rpc-error 5 -32012 "stream failed on purpose"`)

		arm(Fault{Kind: FaultStall}, PhaseBeforeActive, "b", 1)
		h.open(`6`, `{"name":"b"}`)
		h.publish("b", 1)
		h.clk.Advance(DefaultHeartbeat)
		got := h.trace(`1`) // from streams 1 and 4, in no particular order between them
		slices.Sort(got)
		if strings.Join(got, "|") != `event "evt_E_1" "b" 1 @1|heartbeat @0 sub=4|heartbeat @1` {
			h.t.Fatalf("while 6 holds its acknowledgement: %q", got)
		}
		if n, _ := h.srv.Inject(context.Background(), Fault{Kind: FaultResume}, Target{Subscription: `6`}); n != 1 {
			h.t.Fatal("stream 6 is not open")
		}
		h.expect(`6`, `active @0`, `event "evt_E_1" "b" 1 @1`)

		arm(Fault{Kind: FaultDisconnect}, PhaseAfterActive, "", 1)
		h.open(`7`, `{"name":"a"}`)
		h.expect(`7`, `active @0`)
		if _, ok := <-h.frames; ok {
			h.t.Fatal("the output goes on after the disconnect")
		}
	})
}

func TestFaultChecks(t *testing.T) {
	withServer(t, Options{}, basicTypes(), func(h *harness) {
		for _, f := range []Fault{{Kind: "nope"}, {Kind: FaultMalformed, Frame: "x"}, {Kind: FaultStall, Ms: -1},
			{Kind: FaultOversized, Bytes: maxOversized + 1}, {Kind: FaultError, Code: json.RawMessage(`"x"`)}, {Kind: FaultDelay}} {
			if _, err := h.srv.Inject(context.Background(), f, Target{}); err == nil {
				h.t.Errorf("Inject %+v: no error", f)
			}
		}
		if err := h.srv.Arm(Fault{Kind: FaultDelay}, PhaseAfterActive, "", 1); err == nil {
			h.t.Error("delay armed after active")
		}
		if err := h.srv.Arm(Fault{Kind: FaultEnd}, "sometime", "", 1); err == nil {
			h.t.Error("unknown phase")
		}
	})
}
