package sessions

import (
	"fmt"
	"strings"
	"testing"
)

// step is one input of a limits table: a request, a cancel, an outcome,
// an end on its own of a typed subscription, or a session's end.
type step struct {
	sid  string
	do   string // request, cancel, done, forget, gone, end
	req  Request
	id   uint64
	sub  string
	want string // the effects' trace
}

func runSteps(t *testing.T, m *Member, steps []step) {
	t.Helper()
	for i, st := range steps {
		var effs []Effect
		switch st.do {
		case "request":
			effs = m.Request(st.sid, st.req)
		case "cancel":
			effs = m.Cancel(st.sid, st.id)
		case "done":
			effs = m.CallDone(st.sid, st.id, st.sub)
		case "forget":
			effs = m.Forget(st.sid, st.id, st.sub)
		case "gone":
			m.TypedGone(st.sid, st.req.Key, st.id)
		case "end":
			effs = m.End(st.sid, "gone", true)
		}
		// The liveness timer's arming is left out: every input has one.
		var kept []Effect
		for _, e := range effs {
			if e.Kind != Arm {
				kept = append(kept, e)
			}
		}
		expect(t, fmt.Sprintf("step %d (%s %s %+v)", i, st.sid, st.do, st.req), kept, st.want)
	}
}

func sub(id uint64) Request { return Request{ID: id, Counts: true, Action: "subscribe"} }
func unsub(id uint64, s string) Request {
	return Request{ID: id, Action: "unsubscribe", Sub: s}
}
func tsub(id, key uint64) Request   { return Request{ID: id, Action: ActionTypedSubscribe, Key: key} }
func tunsub(id, key uint64) Request { return Request{ID: id, Action: ActionTypedUnsubscribe, Key: key} }
func callReq(id uint64) Request     { return Request{ID: id, Server: "s", Counts: true} }

func TestSessionLimits(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"subscriptions: events shares, typed ones and subscribes in flight count; others unaffected", []step{
			{sid: "a", do: "request", req: sub(1), want: "run a 1"},
			{sid: "a", do: "done", id: 1, sub: "x", want: "reply a 1"},
			{sid: "b", do: "request", req: sub(1), want: "run b 1"},
			{sid: "b", do: "done", id: 1, sub: "x", want: "reply b 1"}, // a share of x: counts for b too
			{sid: "a", do: "request", req: tsub(2, 7), want: "run a 2"},
			{sid: "a", do: "request", req: sub(3), want: "run a 3"}, // in flight: counts
			{sid: "a", do: "request", req: sub(4), want: "refuse a 4 subscriptions 3/3"},
			{sid: "a", do: "request", req: tsub(5, 8), want: "refuse a 5 subscriptions 3/3"},
			{sid: "b", do: "request", req: sub(2), want: "run b 2"},
			{sid: "b", do: "request", req: tsub(3, 7), want: "run b 3"}, // keys are per session
			{sid: "a", do: "request", req: callReq(6), want: "run a 6"}, // other calls are not subscriptions
			{sid: "a", do: "done", id: 3, sub: "x", want: "reply a 3"},  // reused what a owns: 2 held
			{sid: "a", do: "request", req: sub(7), want: "run a 7"},
			{sid: "a", do: "request", req: sub(8), want: "refuse a 8 subscriptions 3/3"},
			{sid: "a", do: "request", req: unsub(9, "x"), want: "reply-stopped a 9"}, // b shares it
			{sid: "a", do: "request", req: sub(10), want: "run a 10"},
		}},
		{"a typed subscription counts until its Stop, its failure or its end on its own", []step{
			{sid: "a", do: "request", req: tsub(1, 1), want: "run a 1"},
			{sid: "a", do: "request", req: tsub(2, 2), want: "run a 2"},
			{sid: "a", do: "request", req: tsub(3, 3), want: "run a 3"},
			{sid: "a", do: "request", req: tsub(4, 4), want: "refuse a 4 subscriptions 3/3"},
			{sid: "a", do: "done", id: 1, sub: "t1", want: "reply a 1"},
			{sid: "a", do: "done", id: 2, sub: "", want: "end-typed a key=2 (2); reply a 2"}, // failed
			{sid: "a", do: "request", req: tsub(5, 5), want: "run a 5"},
			{sid: "a", do: "request", req: tsub(6, 6), want: "refuse a 6 subscriptions 3/3"},
			{sid: "a", do: "request", req: tunsub(7, 1), want: "run a 7"}, // never refused
			{sid: "a", do: "request", req: tsub(8, 1), want: "run a 8"},
			{sid: "a", do: "done", id: 3, sub: "t3", want: "reply a 3"},
			{sid: "a", do: "gone", req: Request{Key: 3}, id: 3},
			{sid: "a", do: "request", req: tsub(9, 9), want: "run a 9"}, // 3 ended on its own: 5, 1 (call 8) and 9 held
			{sid: "a", do: "request", req: tsub(11, 11), want: "refuse a 11 subscriptions 3/3"},
			{sid: "a", do: "done", id: 5, sub: "t5", want: "reply a 5"},
			{sid: "a", do: "gone", req: Request{Key: 5}, id: 5},
			{sid: "a", do: "request", req: tsub(10, 10), want: "run a 10"},
		}},
		{"a typed key in use is refused; a stopped one may be used again", []step{
			{sid: "a", do: "request", req: tsub(1, 4), want: "run a 1"},
			{sid: "a", do: "request", req: tsub(2, 4), want: "refuse a 2 key 0/0"},
			{sid: "a", do: "request", req: tunsub(3, 4), want: "run a 3"},
			{sid: "a", do: "request", req: tsub(4, 4), want: "run a 4"},
			{sid: "a", do: "done", id: 1, sub: "t1", want: "end-typed a key=4 (1); reply a 1"}, // stopped meanwhile: ended, the new one stays
			{sid: "a", do: "done", id: 4, sub: "t4", want: "reply a 4"},
			{sid: "a", do: "request", req: tsub(5, 4), want: "refuse a 5 key 0/0"},
		}},
		{"calls in flight: refused at the limit, cancelled ones count until they finish; unsubscribes never refused", []step{
			{sid: "a", do: "request", req: callReq(1), want: "run a 1"},
			{sid: "a", do: "request", req: sub(2), want: "run a 2"},
			{sid: "a", do: "request", req: callReq(3), want: "refuse a 3 calls 2/2"},
			{sid: "a", do: "request", req: tsub(3, 1), want: "refuse a 3 calls 2/2"},
			{sid: "b", do: "request", req: callReq(1), want: "run b 1"},
			{sid: "a", do: "cancel", id: 1, want: "cancel a 1"},
			{sid: "a", do: "request", req: callReq(4), want: "refuse a 4 calls 2/2"},
			{sid: "a", do: "done", id: 1, want: "reply a 1"},
			{sid: "a", do: "request", req: callReq(4), want: "run a 4"},
			{sid: "a", do: "done", id: 2, sub: "x", want: "reply a 2"},
			{sid: "a", do: "request", req: callReq(5), want: "run a 5"},
			{sid: "a", do: "request", req: unsub(6, "x"), want: "run a 6"}, // the last owner's: runs beyond the limit
			{sid: "a", do: "request", req: tunsub(7, 3), want: "run a 7"},
			{sid: "a", do: "request", req: Request{ID: 4}, want: "reply-duplicate a 4"},
		}},
		{"the end ends the typed subscriptions, made and being made", []step{
			{sid: "a", do: "request", req: tsub(1, 1), want: "run a 1"},
			{sid: "a", do: "done", id: 1, sub: "t1", want: "reply a 1"},
			{sid: "a", do: "request", req: tsub(2, 2), want: "run a 2"},
			{sid: "a", do: "end", want: `stop-timer a; cancel a 2; reply-ended a 2; ended a calls=1 subs=2 "gone"; end-typed a key=1 (1); end-typed a key=2 (2)`},
			{sid: "a", do: "done", id: 2, sub: "t2", want: "end-typed a key=2 (2); stop a"},
		}},
		{"a typed subscribe given up or forgotten ends its subscription", []step{
			{sid: "a", do: "request", req: tsub(1, 1), want: "run a 1"},
			{sid: "a", do: "cancel", id: 1, want: "cancel a 1"},
			{sid: "a", do: "done", id: 1, sub: "t1", want: "end-typed a key=1 (1); reply a 1"},
			{sid: "a", do: "request", req: tsub(2, 1), want: "run a 2"},
			{sid: "a", do: "forget", id: 2, want: "end-typed a key=1 (2)"},
			{sid: "a", do: "request", req: tsub(3, 1), want: "run a 3"},
			{sid: "a", do: "gone", req: Request{Key: 1}, id: 3}, // its final status came first
			{sid: "a", do: "done", id: 3, sub: "t3", want: "reply a 3"},
			{sid: "a", do: "request", req: tsub(4, 1), want: "run a 4"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			m.SetLimits(Limits{Subs: 3, Calls: 2})
			if strings.HasPrefix(tc.name, "subscriptions") || strings.HasPrefix(tc.name, "a typed") || strings.HasPrefix(tc.name, "the end") {
				m.SetLimits(Limits{Subs: 3})
			}
			m.Attach("a")
			m.Attach("b")
			runSteps(t, m, tc.steps)
		})
	}
}

// The refusal's text names the limit and what the session holds.
func TestRefusalSaysWhy(t *testing.T) {
	m := New()
	m.AttachWith("a", Limits{Subs: 1, Calls: 1})
	m.AttachWith("peer", Limits{}) // another member's session: no limits
	m.Request("a", sub(1))
	effs := m.Request("a", callReq(2))
	if e := effs[len(effs)-1]; e.Kind != Refuse || !strings.Contains(e.Why, "1 calls in flight, its limit of 1") {
		t.Errorf("calls refusal: %+v", e)
	}
	m.CallDone("a", 1, "x")
	effs = m.Request("a", sub(3))
	if e := effs[len(effs)-1]; e.Kind != Refuse || !strings.Contains(e.Why, "holds 1 subscriptions") || !strings.Contains(e.Why, "limit of 1") {
		t.Errorf("subscriptions refusal: %+v", e)
	}
	for i := uint64(1); i <= 200; i++ {
		if effs := m.Request("peer", sub(i)); effs[len(effs)-1].Kind != Run {
			t.Fatalf("unlimited session refused at %d: %v", i, trace(effs))
		}
	}
	if got := m.Held("peer"); got != 200 {
		t.Errorf("held %d", got)
	}
}
