package simtests

import (
	"fmt"
	"math/rand/v2"

	"github.com/mcprt/mcprt/sessions"
)

// Each session's limits (sessions/limits.go), checked against the
// simulator's own model (invariant 30): a request is refused exactly when
// its session's own count is at a limit, never because of another
// session; the refusal is its answer, at once, and does nothing else.
// Counted by the model: the calls the member holds for the session (held:
// from their run until their outcome reaches the rules without their
// running again), and its subscriptions (its shares in the model of
// owners, its mcp_events subscribes held). One seed in three gives its
// sessions tight limits, and now and then a session floods the member
// past them.

// sharedLimits draws the seed's limits from a generator of its own (the
// steps of the campaign stay what they were); tight reports limits low
// enough to be reached.
func (s *sharedWorld) sharedLimits(lr *rand.Rand) (tight bool) {
	if lr.IntN(3) != 0 {
		return false
	}
	s.limits = sessions.Limits{Subs: 1 + lr.IntN(4), Calls: 1 + lr.IntN(5)}
	s.core.SetLimits(s.limits)
	s.w.Tracef("session limits: %d subscriptions, %d calls in flight", s.limits.Subs, s.limits.Calls)
	return true
}

// modelHeld is what session sid holds by the model: calls in flight and
// subscriptions.
func (s *sharedWorld) modelHeld(sid string) (calls, subs int) {
	for _, mc := range s.calls[sid] {
		if mc.held {
			calls++
			if mc.req.kind == "subscribe" {
				subs++
			}
		}
	}
	for _, owners := range s.own {
		if owners[sid] {
			subs++
		}
	}
	return calls, subs + s.typedHeld(sid)
}

// checkLimits checks the effects of session sid's request r, which held
// calls and subs (the model, before it) when it reached the member.
func (s *sharedWorld) checkLimits(sid string, r sessions.Request, calls, subs int, effs []sessions.Effect) {
	want := sessions.Effect{Kind: sessions.Refuse, Session: sid, ID: r.ID}
	switch {
	case r.Action == "unsubscribe" || r.Action == sessions.ActionTypedUnsubscribe: // never refused
	case s.limits.Calls > 0 && calls >= s.limits.Calls:
		want.Refused, want.Count, want.Limit = sessions.RefusedCalls, calls, s.limits.Calls
	case (r.Action == "subscribe" || r.Action == sessions.ActionTypedSubscribe) && s.limits.Subs > 0 && subs >= s.limits.Subs:
		want.Refused, want.Count, want.Limit = sessions.RefusedSubs, subs, s.limits.Subs
	}
	var got *sessions.Effect
	for i, e := range effs {
		if e.Kind == sessions.ReplyDuplicate {
			return
		}
		if e.Kind == sessions.Refuse {
			got = &effs[i]
		}
	}
	switch {
	case want.Refused == 0 && got != nil:
		s.w.violate("member: %s's request %d (%s) refused (%s), but it holds %d call(s) and %d subscription(s) of its limits %+v", sid, r.ID, r.Action, got, calls, subs, s.limits)
	case want.Refused != 0 && got == nil:
		s.w.violate("member: %s's request %d (%s) taken, but it holds %d call(s) and %d subscription(s): over its limits %+v", sid, r.ID, r.Action, calls, subs, s.limits)
	case got != nil:
		if got.Refused != want.Refused || got.Count != want.Count || got.Limit != want.Limit {
			s.w.violate("member: %s's request %d refused as %s, want %s", sid, r.ID, got, want)
		}
		for _, e := range effs {
			if e.Session != sid || (e.Kind != sessions.Arm && e.Kind != sessions.Refuse) {
				s.w.violate("member: %s's refused request %d did more than answer: %s", sid, r.ID, e)
			}
		}
		sharedTotals.refused.Add(1)
	}
}

// flood has a session send its limits' worth of subscribes or calls and
// more at once (lr: the limits' generator).
func (c *campaign) flood(lr *rand.Rand) {
	sw := c.w.shared
	ss := c.sharedSession(lr)
	if ss == nil {
		return
	}
	subscribe := lr.IntN(2) == 0
	n := sw.limits.Calls + 2
	if subscribe {
		n = sw.limits.Subs + 2
	}
	c.w.Tracef("%s floods the member with %d %s", ss.name, n, map[bool]string{true: "subscribes", false: "calls"}[subscribe])
	for i := 0; i < n; i++ {
		if subscribe {
			s, t, args := c.sharedIdentity(lr)
			ss.request(&sharedReq{kind: "subscribe", server: s.Name, tool: t.name, args: args})
		} else {
			s := c.w.servers[c.w.order[lr.IntN(len(c.w.order))]]
			ss.request(&sharedReq{kind: "call", server: s.Name, tool: s.Tools[lr.IntN(len(s.Tools))], args: fmt.Sprintf(`{"n":%d}`, lr.IntN(1000))})
		}
	}
}
