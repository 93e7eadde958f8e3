package sessions

import (
	"fmt"
	"strings"
	"testing"
)

func trace(effs []Effect) string {
	var out []string
	for _, e := range effs {
		out = append(out, e.String())
	}
	return strings.Join(out, "; ")
}

func expect(t *testing.T, what string, effs []Effect, want string) {
	t.Helper()
	if got := trace(effs); got != want {
		t.Errorf("%s:\n got  %s\n want %s", what, got, want)
	}
}

func TestCallsAnsweredOnceAndReleasedAtEnd(t *testing.T) {
	m := New()
	expect(t, "attach", m.Attach("a"), "arm a beat=1")
	m.Attach("b")
	expect(t, "request", m.Request("a", Request{ID: 1, Server: "s", Counts: true}), "arm a beat=2; run a 1")
	expect(t, "duplicate", m.Request("a", Request{ID: 1}), "arm a beat=3; reply-duplicate a 1")
	m.Request("a", Request{ID: 2})
	m.Request("b", Request{ID: 1, Server: "s", Counts: true})
	expect(t, "cancel of b's call touches only b", m.Cancel("b", 1), "arm b beat=3; cancel b 1")
	expect(t, "end", m.End("a", "it detached", true),
		`stop-timer a; cancel a 1; reply-ended a 1; cancel a 2; reply-ended a 2; ended a calls=2 subs=0 "it detached"`)
	expect(t, "late outcome dropped", m.CallDone("a", 1, ""), "")
	expect(t, "last late outcome stops the actor", m.CallDone("a", 2, ""), "stop a")
	expect(t, "request of an ended session", m.Request("a", Request{ID: 3}), "")
	expect(t, "b answered", m.CallDone("b", 1, ""), "reply b 1")
	expect(t, "answered once", m.CallDone("b", 1, ""), "")
}

func TestSubscriptionSharesEndWithTheLastOwner(t *testing.T) {
	m := New()
	m.Attach("a")
	m.Attach("b")
	m.Request("a", Request{ID: 1, Counts: true, Action: "subscribe"})
	m.Request("b", Request{ID: 1, Counts: true, Action: "subscribe"})
	expect(t, "a owns", m.CallDone("a", 1, "sub1"), "reply a 1")
	expect(t, "b shares", m.CallDone("b", 1, "sub1"), "reply b 1")
	if got := fmt.Sprint(m.Owners("sub1")); got != "[a b]" {
		t.Fatalf("owners %s", got)
	}
	expect(t, "unsubscribe of another's id", m.Request("a", Request{ID: 2, Action: "unsubscribe", Sub: "nope"}), "arm a beat=3; reply-stopped a 2")
	expect(t, "a leaves, b stays", m.Request("a", Request{ID: 3, Action: "unsubscribe", Sub: "sub1"}), "arm a beat=4; reply-stopped a 3")
	parts := m.Split(2, func(i int) string { return []string{"sub1", "other"}[i] }, 3)
	if got := fmt.Sprint(parts); got != "[{a [1]} {b [0 1]}]" {
		t.Errorf("split %s", got)
	}
	m.Attach("c") // owns nothing
	parts = m.Split(1, func(int) string { return "sub1" }, 5)
	if got := fmt.Sprint(parts); got != "[{b [0]}]" {
		t.Errorf("split with drops: %s, want only b (a owns nothing now, c never did)", got)
	}
	m.Request("c", Request{ID: 1, Counts: true, Action: "subscribe"})
	m.CallDone("c", 1, "sub9")
	parts = m.Split(1, func(int) string { return "sub1" }, 5)
	if got := fmt.Sprint(parts); got != "[{b [0]} {c []}]" {
		t.Errorf("split with drops: %s, want b's item and an empty part for c (its items may have been dropped)", got)
	}
	if got := fmt.Sprint(m.Split(1, func(int) string { return "sub1" }, 0)); got != "[{b [0]}]" {
		t.Errorf("split without drops: %s", got)
	}
	m.Request("c", Request{ID: 5, Counts: true, Action: "subscribe"})
	expect(t, "a forgotten call answers nothing and releases what it made", m.Forget("c", 5, "sub5"), "unsubscribe c sub5")
	expect(t, "forgotten once", m.CallDone("c", 5, "sub5"), "")
	m.End("c", "gone", true)
	expect(t, "b's end ends the runtime's subscription", m.End("b", "no heartbeat", true),
		`stop-timer b; ended b calls=0 subs=1 "no heartbeat"; unsubscribe b sub1; stop b`)
	m.Request("a", Request{ID: 4, Counts: true, Action: "subscribe"})
	expect(t, "a subscribe answered after its session ended", m.End("a", "gone", true),
		`stop-timer a; cancel a 4; reply-ended a 4; ended a calls=1 subs=0 "gone"`)
	expect(t, "is released at once", m.CallDone("a", 4, "sub2"), "unsubscribe a sub2; stop a")
	m.Attach("c")
	m.Request("c", Request{ID: 1, Counts: true, Action: "subscribe"})
	m.Cancel("c", 1)
	expect(t, "a subscribe the session cancelled owns nothing", m.CallDone("c", 1, "sub3"), "unsubscribe c sub3; reply c 1")
	if got := m.Owners("sub3"); len(got) != 0 {
		t.Errorf("owners of sub3: %v", got)
	}
	m.Request("c", Request{ID: 2, Counts: true, Action: "subscribe"})
	m.Request("c", Request{ID: 3, Counts: true, Action: "unsubscribe", Sub: "sub4"})
	expect(t, "a subscribe sent before an unsubscribe of its subscription owns nothing", m.CallDone("c", 2, "sub4"), "unsubscribe c sub4; reply c 2")
}

func TestLivenessAndQuestions(t *testing.T) {
	m := New()
	m.Attach("a")
	m.Attach("b")
	expect(t, "heartbeat", m.Heartbeat("a"), "arm a beat=2; heartbeat-ack a")
	expect(t, "stale timer", m.Expired("a", 1, "silent"), "")
	m.Request("b", Request{ID: 7, Server: "s", Counts: true})
	m.Request("a", Request{ID: 1, Server: "s", Counts: true})
	if got := m.Pick("s"); got != "b" {
		t.Errorf("pick = %s, want the oldest call's session b", got)
	}
	if got := m.Pick("t"); got != "a" {
		t.Errorf("pick = %s, want the first attached a", got)
	}
	expect(t, "ask b", m.AskOut("b", 10), "pass-ask b 10")
	expect(t, "a cannot answer b's question", m.Answer("a", 10), "arm a beat=4")
	expect(t, "b's end answers its question", m.End("b", "gone", true),
		`stop-timer b; cancel b 7; reply-ended b 7; ended b calls=1 subs=0 "gone"; answer-ended b 10`)
	if got := m.Pick("s"); got != "a" {
		t.Errorf("pick after b ended = %s", got)
	}
	expect(t, "ask an ended session", m.AskOut("b", 11), "refuse-ask b 11")
	expect(t, "live timer", m.Expired("a", 4, "silent"),
		`stop-timer a; cancel a 1; reply-ended a 1; ended a calls=1 subs=0 "silent"`)
	if got := m.Pick("s"); got != "" {
		t.Errorf("pick with nobody attached = %q", got)
	}
}

// A subscribe answered by reuse with a subscription its last owner is
// ending is not taken: it runs again once the end is done.
func TestSubscribeReusingAnEndingSubscriptionRunsAgain(t *testing.T) {
	m := New()
	m.Attach("a")
	m.Attach("b")
	m.Request("a", Request{ID: 1, Counts: true, Action: "subscribe"})
	m.CallDone("a", 1, "x")
	m.Request("b", Request{ID: 1, Counts: true, Action: "subscribe"})
	expect(t, "a's unsubscribe as the last owner runs", m.Request("a", Request{ID: 2, Action: "unsubscribe", Sub: "x"}), "arm a beat=3; run a 2")
	expect(t, "b's answer naming x, still ending, waits", m.CallDone("b", 1, "x"), "")
	if got := m.Owners("x"); len(got) != 0 || !m.Parked("b", 1) {
		t.Fatalf("owners of x %v, b's subscribe parked %v", got, m.Parked("b", 1))
	}
	expect(t, "x's end runs b's subscribe again", m.CallDone("a", 2, ""), "reply a 2; rerun b 1 (x was ending)")
	expect(t, "b gets the fresh subscription", m.CallDone("b", 1, "y"), "reply b 1")
	if got := fmt.Sprint(m.Owners("y"), m.Owners("x"), m.Closing()); got != "[b] [] 0" {
		t.Errorf("owners of y, of x, closing: %s", got)
	}

	// Ended first: a subscribe that was running then runs again at once.
	m.Request("a", Request{ID: 3, Counts: true, Action: "subscribe"})
	m.Request("b", Request{ID: 2, Action: "unsubscribe", Sub: "y"})
	expect(t, "y ended", m.CallDone("b", 2, ""), "reply b 2")
	if m.Closing() != 1 {
		t.Errorf("y forgotten while a subscribe that may name it runs")
	}
	expect(t, "a's answer naming y runs again", m.CallDone("a", 3, "y"), "rerun a 3 (y was ending)")
	if m.Closing() != 0 {
		t.Errorf("y remembered after every subscribe running at its end finished")
	}
	expect(t, "the runtime answers y again: taken", m.CallDone("a", 3, "y"), "reply a 3")

	// Ended by the owner's end (an Unsubscribe effect), and a session
	// ending while its subscribe waits.
	m.Attach("c")
	m.Request("b", Request{ID: 3, Counts: true, Action: "subscribe"})
	m.Request("c", Request{ID: 1, Counts: true, Action: "subscribe"})
	expect(t, "a's end ends y", m.End("a", "gone", true), `stop-timer a; ended a calls=0 subs=1 "gone"; unsubscribe a y; stop a`)
	expect(t, "b waits", m.CallDone("b", 3, "y"), "")
	expect(t, "c waits", m.CallDone("c", 1, "y"), "")
	expect(t, "c's end drops its waiting call", m.End("c", "gone", true),
		`stop-timer c; cancel c 1; reply-ended c 1; ended c calls=1 subs=0 "gone"; stop c`)
	expect(t, "the runtime's unsubscribe done", m.Unsubscribed("y"), "rerun b 3 (y was ending)")
	expect(t, "once", m.Unsubscribed("y"), "")
	expect(t, "b answered once", m.CallDone("b", 3, "z"), "reply b 3")
	if m.Closing() != 0 {
		t.Errorf("closing remembered: %d", m.Closing())
	}
}

// The last owner's unsubscribe runs to its end: a cancel of it, or its
// session's end, cancels nothing on the runtime (it would leave the
// subscription live with no owner); the call is still answered once.
func TestLastOwnersUnsubscribeIsNotCancelled(t *testing.T) {
	m := New()
	m.Attach("a")
	m.Request("a", Request{ID: 1, Counts: true, Action: "subscribe"})
	m.CallDone("a", 1, "sub1")
	expect(t, "the last owner's unsubscribe runs", m.Request("a", Request{ID: 2, Action: "unsubscribe", Sub: "sub1"}), "arm a beat=3; run a 2")
	expect(t, "its cancel cancels nothing", m.Cancel("a", 2), "arm a beat=4")
	m.Request("a", Request{ID: 3, Counts: true, Action: "subscribe"})
	m.CallDone("a", 3, "sub2")
	m.Request("a", Request{ID: 4, Action: "unsubscribe", Sub: "sub2"})
	m.Request("a", Request{ID: 5, Server: "s", Counts: true})
	expect(t, "the end cancels the other call, not the unsubscribe", m.End("a", "it detached", true),
		`stop-timer a; reply-ended a 2; reply-ended a 4; cancel a 5; reply-ended a 5; ended a calls=3 subs=0 "it detached"`)
}
