package remote

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
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
	want("s", nil, "no session attached")
	r.add(a, "x")
	r.add(b, "x")
	r.add(c, "x")
	want("s", a, "no call yet: the first attached")
	r.begin(b, 1, "")
	want("s", b, "a call naming no server")
	r.begin(c, 1, "s")
	r.begin(a, 2, "s")
	want("s", c, "the oldest call naming the server")
	want("t", b, "another server: the call naming none")
	r.finish(c, 1)
	want("s", a, "c's call ended: a's remains")
	r.finish(a, 2)
	r.finish(b, 1)
	want("s", a, "no call in flight: the session whose call last named the server")
	r.remove(a)
	want("s", b, "that session detached: the first attached of the rest")
	r.begin(c, 3, "s")
	r.remove(c)
	want("s", b, "a detached session's calls do not count")
}
