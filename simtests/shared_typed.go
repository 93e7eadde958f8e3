package simtests

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/sessions"
)

// Typed subscriptions through a session (remote/ops_subscribe.go), as the
// rules hold them (sessions.Member: made or being made, ended by the
// session's Stop, its end, or on their own) and count them against the
// session's limit. The simulated member makes no runtime subscription for
// them: it keeps a record of each (typedRec), answers a subscribe after a
// delay the seed draws (one in five fails), ends a record when the rules
// say so (sessions.EndTyped) or when a Stop runs, and now and then ends
// one on its own (its final status: TypedGone, and the session is told).
// Invariant 31: once quiet, no record of an ended session is live, and
// the rules hold exactly the live records the model counts; at
// checkpoints a session believes it holds exactly the records it holds.

// typedRec is a typed subscription the member made or is making.
type typedRec struct {
	session  string
	key      uint64
	call     uint64 // the subscribe's id
	id       string // the subscription's id
	pending  bool   // its subscribe's outcome has not reached the rules
	owned    bool   // the rules took it: the session holds it
	ended    bool   // ended (by the rules, a Stop, on its own)
	gone     bool   // ended on its own
	released bool   // the session's Stop reached the member
	dropped  bool   // the rules ended it (sessions.EndTyped)
}

// counts reports whether r counts against its session's limit (the model).
func (r *typedRec) counts() bool {
	return !r.released && !r.dropped && (r.pending || (r.owned && !r.gone))
}

func (r *typedRec) String() string {
	return fmt.Sprintf("%s key %d (%s, call %d, pending=%v owned=%v ended=%v gone=%v released=%v)",
		r.session, r.key, r.id, r.call, r.pending, r.owned, r.ended, r.gone, r.released)
}

// typedRequest is the rules' view of a typed subscribe or Stop of session
// sid; a Stop reaching the member while the session lives releases its
// key at once (the model).
func (s *sharedWorld) typedRequest(sid string, id uint64, q *sharedReq, live bool) sessions.Request {
	if q.kind == "typed" {
		return sessions.Request{ID: id, Action: sessions.ActionTypedSubscribe, Key: q.key}
	}
	if live {
		for _, r := range s.typed {
			if r.session == sid && r.key == q.key {
				r.released = true
			}
		}
	}
	return sessions.Request{ID: id, Action: sessions.ActionTypedUnsubscribe, Key: q.key}
}

// runTyped runs a typed subscribe or Stop (false for any other call).
func (s *sharedWorld) runTyped(mc *memberCall) bool {
	switch mc.req.kind {
	case "typed":
		r := &typedRec{session: mc.session, key: mc.req.key, call: mc.id, id: fmt.Sprintf("t%d", len(s.typed)+1), pending: true}
		s.typed = append(s.typed, r)
		s.w.Tracef("member %s: typed subscribe %d key %d", mc.session, mc.id, r.key)
		s.post(func() { s.typedOutcome(mc, r) })
	case "typedstop":
		s.post(func() {
			for _, r := range s.typed {
				if r.session == mc.session && r.key == mc.req.key && !r.ended {
					r.ended = true
					s.w.Tracef("member %s: typed %s stopped", mc.session, r.id)
				}
			}
			mc.finished, mc.held = true, false
			effs := s.core.CallDone(mc.session, mc.id, "")
			s.exec(effs, mc, &hopMsg{kind: "reply", id: mc.id, res: outcome{ok: true, text: `{"stopped":true}`}})
		})
	default:
		return false
	}
	return true
}

// typedOutcome is a typed subscribe's outcome reaching the rules.
func (s *sharedWorld) typedOutcome(mc *memberCall, r *typedRec) {
	mc.finished, mc.held, r.pending = true, false, false
	ok := s.rng.IntN(5) != 0
	sub := ""
	if ok {
		sub = r.id
	} else {
		r.ended = true
	}
	kept := ok && !s.ended[mc.session] && !mc.gaveUp && !r.released
	effs := s.core.CallDone(mc.session, mc.id, sub)
	ended := false
	for _, e := range effs {
		ended = ended || (e.Kind == sessions.EndTyped && e.ID == r.call && e.Key == r.key)
	}
	if ended == kept {
		s.w.violate("member: %s's typed subscribe %d (ok %v, session ended %v, given up %v, stopped %v): ended by the rules %v", mc.session, mc.id, ok, s.ended[mc.session], mc.gaveUp, r.released, ended)
	}
	r.owned = kept && !r.gone
	if kept {
		sharedTotals.typed.Add(1)
	}
	res := outcome{code: "connect_failed", text: "typed subscribe failed"}
	if ok {
		res = outcome{ok: true, text: "typed " + r.id}
	}
	s.exec(effs, mc, &hopMsg{kind: "reply", id: mc.id, res: res})
	if kept && r.gone && !s.ended[mc.session] { // its final status follows the answer
		ss := s.sessions[mc.session]
		ss.hop.send(&ss.hop.down, hopMsg{kind: "typedgone", id: r.key})
	}
}

// endTyped executes sessions.EndTyped.
func (s *sharedWorld) endTyped(e sessions.Effect) {
	for _, r := range s.typed {
		if r.session == e.Session && r.key == e.Key && r.call == e.ID && !r.ended {
			r.ended, r.dropped = true, true
			s.w.Tracef("member %s: typed %s ended (%s)", e.Session, r.id, e)
		}
	}
}

// typedHeld counts session sid's typed subscriptions by the model.
func (s *sharedWorld) typedHeld(sid string) int {
	n := 0
	for _, r := range s.typed {
		if r.session == sid && r.counts() {
			n++
		}
	}
	return n
}

// typedGoneOnItsOwn ends a live record on its own (its final status).
func (s *sharedWorld) typedGoneOnItsOwn(lr *rand.Rand) {
	var live []*typedRec
	for _, r := range s.typed {
		if !r.ended {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return
	}
	r := live[lr.IntN(len(live))]
	r.ended, r.gone = true, true
	s.w.Tracef("member %s: typed %s ends on its own", r.session, r.id)
	s.core.TypedGone(r.session, r.key, r.call)
	if !r.pending && s.core.Live(r.session) {
		ss := s.sessions[r.session]
		ss.hop.send(&ss.hop.down, hopMsg{kind: "typedgone", id: r.key})
	}
}

// typedQuiet is invariant 31 once quiet.
func (s *sharedWorld) typedQuiet() {
	held := map[string][]string{}
	for _, r := range s.typed {
		if !r.ended && (s.ended[r.session] || !s.core.Live(r.session)) {
			s.w.violate("member: typed subscription %s outlives its session's end", r)
		}
		if r.counts() {
			held[r.session] = append(held[r.session], fmt.Sprint(r.key))
		}
	}
	for _, sid := range s.order {
		var got []string
		for _, k := range s.core.Typed(sid) {
			got = append(got, fmt.Sprint(k))
		}
		if strings.Join(got, ",") != strings.Join(held[sid], ",") {
			s.w.violate("member: the rules hold %s's typed subscriptions [%s], the model [%s]", sid, strings.Join(got, ","), strings.Join(held[sid], ","))
		}
	}
}

// typedView checks that live session ss believes it holds exactly its
// owned, live typed subscriptions (a checkpoint, everything delivered).
func (s *sharedWorld) typedView(ss *simSession) {
	var model, view []string
	for _, r := range s.typed {
		if r.session == ss.name && r.owned && !r.ended && !r.released {
			model = append(model, fmt.Sprint(r.key))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(ss.typed)) {
		view = append(view, fmt.Sprint(k))
	}
	if strings.Join(model, ",") != strings.Join(view, ",") {
		s.w.violate("session %s: believes it holds typed subscriptions [%s], the member [%s]", ss.name, strings.Join(view, ","), strings.Join(model, ","))
	}
}

// typedStep is a session's typed subscribe or Stop, or a typed
// subscription ending on its own (lr: the generator of these steps).
func (c *campaign) typedStep(lr *rand.Rand) {
	sw := c.w.shared
	k := lr.IntN(20)
	if k < 3 {
		sw.typedGoneOnItsOwn(lr)
		return
	}
	ss := c.sharedSession(lr)
	if ss == nil {
		return
	}
	if held := slices.Sorted(maps.Keys(ss.typed)); k < 8 && len(held) > 0 {
		ss.request(&sharedReq{kind: "typedstop", key: held[lr.IntN(len(held))]})
		return
	}
	ss.nextKey++
	ss.request(&sharedReq{kind: "typed", key: ss.nextKey})
}
