package remote

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/sessions"
)

// The rule that picks the session a server's question goes to
// (router_pick.go), step by step.
func TestPickRule(t *testing.T) {
	r := newRouter()
	a, b, c := actor.NewPID("x", "a"), actor.NewPID("x", "b"), actor.NewPID("x", "c")
	want := func(server string, p *actor.PID, why string) {
		t.Helper()
		got := r.pick(server)
		switch {
		case p == nil && got != nil, p != nil && (got == nil || got.Id != p.Id):
			t.Errorf("%s: picked %v, want %v", why, got, p)
		}
	}
	begin := func(p *actor.PID, id uint64, server string) {
		r.do(func(m *sessions.Member) []sessions.Effect {
			return m.Request(p.Id, sessions.Request{ID: id, Server: server, Counts: true})
		})
	}
	finish := func(p *actor.PID, id uint64) {
		r.do(func(m *sessions.Member) []sessions.Effect { return m.CallDone(p.Id, id, "") })
	}
	remove := func(p *actor.PID) {
		r.do(func(m *sessions.Member) []sessions.Effect { return m.End(p.Id, "it detached", true) })
	}
	want("s", nil, "no session attached")
	r.attach(a, "x", false)
	r.attach(b, "x", false)
	r.attach(c, "x", false)
	want("s", a, "no call yet: the first attached")
	begin(b, 1, "")
	want("s", b, "a call naming no server")
	begin(c, 1, "s")
	begin(a, 2, "s")
	want("s", c, "the oldest call naming the server")
	want("t", b, "another server: the call naming none")
	finish(c, 1)
	want("s", a, "c's call ended: a's remains")
	finish(a, 2)
	finish(b, 1)
	want("s", a, "no call in flight: the session whose call last named the server")
	remove(a)
	want("s", b, "that session detached: the first attached of the rest")
	begin(c, 3, "s")
	remove(c)
	want("s", b, "a detached session's calls do not count")
}

// A subscribe answered with a subscription its last owner is ending runs
// again: the router sends the Rerun to that session's actor (rerunMsg),
// not to the actor whose input caused it, and only once the runtime's
// unsubscribe is done.
func TestRouterSendsReruns(t *testing.T) {
	r := newRouter()
	type sent struct {
		to string
		m  any
	}
	var got []sent
	r.send = func(pid *actor.PID, m any) { got = append(got, sent{pid.Id, m}) }
	a, b := actor.NewPID("x", "a"), actor.NewPID("x", "b")
	r.attach(a, "x", false)
	r.attach(b, "x", false)
	r.do(func(m *sessions.Member) []sessions.Effect {
		m.Request("a", sessions.Request{ID: 1, Counts: true, Action: "subscribe"})
		return m.CallDone("a", 1, "x")
	})
	r.do(func(m *sessions.Member) []sessions.Effect {
		return m.Request("b", sessions.Request{ID: 7, Counts: true, Action: "subscribe"})
	})
	r.do(func(m *sessions.Member) []sessions.Effect {
		return m.Request("a", sessions.Request{ID: 2, Action: "unsubscribe", Sub: "x"})
	})
	if effs := r.do(func(m *sessions.Member) []sessions.Effect { return m.CallDone("b", 7, "x") }); len(effs) != 0 || len(got) != 0 {
		t.Fatalf("b's answer naming x while a ends it: effects %v, sent %v; want nothing yet", effs, got)
	}
	effs := r.do(func(m *sessions.Member) []sessions.Effect { return m.CallDone("a", 2, "") })
	if len(effs) != 1 || effs[0].Kind != sessions.Reply || effs[0].Session != "a" {
		t.Errorf("a's effects %v, want only its reply (the rerun is b's)", effs)
	}
	if len(got) != 1 || got[0].to != "b" || got[0].m != (rerunMsg{id: 7}) {
		t.Errorf("sent %v, want rerunMsg{7} to b", got)
	}
}
