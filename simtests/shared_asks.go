package simtests

import (
	"fmt"
	"maps"
	"slices"

	"github.com/mcprt/mcprt/sessions"
)

// Questions of servers (roots, elicitation) in the shared runtime: the
// simulated servers send none, so the member puts questions itself, as
// remote's ClientHooks do for a server's request (remote/asks.go): the
// rules pick the session (sessions.Member.Pick), the question crosses its
// hop, the session answers it, a server may withdraw it, and a session's
// end answers what it was asked with its end's error. Checked:
//   - Pick follows the documented rule, computed here from the member's own
//     record of the calls in flight: the session with the oldest call in
//     flight naming the server, else the oldest naming none, else the
//     session whose call last named it, else the first attached;
//   - every question is settled exactly once: answered by the session it
//     was put to, withdrawn, refused (its session had ended) or answered
//     with the error its session ended with; after Close none is open;
//   - a session's answer to a question not put to it is ignored (the
//     sessions now and then answer another's question).

// simAsk is one question the member put.
type simAsk struct {
	id              uint64
	session, server string
	settled         int
	how             string
}

// ask puts a question of server to the session the rules pick.
func (s *sharedWorld) ask(server string) {
	want := s.modelPick(server)
	sid := s.core.Pick(server)
	if sid != want {
		s.w.violate("member: a question of %s went to session %q; the rule picks %q", server, sid, want)
	}
	if sid == "" {
		return
	}
	s.nextAsk++
	sharedTotals.questions.Add(1)
	q := &simAsk{id: s.nextAsk, session: sid, server: server}
	s.asks[q.id] = q
	s.w.Tracef("member asks %s question %d of %s", sid, q.id, server)
	s.exec(s.core.AskOut(sid, q.id), nil, nil)
}

// withdraw is the server withdrawing question id: it is settled, and the
// session is told if it still has it.
func (s *sharedWorld) withdraw(id uint64) {
	q := s.asks[id]
	if q == nil || q.settled > 0 {
		return
	}
	s.w.Tracef("member: question %d withdrawn", id)
	s.settle(q, "withdrawn")
	s.exec(s.core.Withdraw(q.session, id), nil, nil)
}

// settle records a question's one outcome.
func (s *sharedWorld) settle(q *simAsk, how string) {
	if q.settled++; q.settled > 1 {
		s.w.violate("member: question %d (to %s) settled twice: %s, then %s", q.id, q.session, q.how, how)
		return
	}
	q.how = how
}

// askEffect executes the question effects of the rules.
func (s *sharedWorld) askEffect(e sessions.Effect, answerer string) {
	q := s.asks[e.ID]
	if q == nil {
		s.w.violate("member: %s for question %d, which was never put", e, e.ID)
		return
	}
	ss := s.sessions[e.Session]
	switch e.Kind {
	case sessions.PassAsk:
		ss.hop.send(&ss.hop.down, hopMsg{kind: "ask", id: e.ID})
	case sessions.WithdrawAsk:
		ss.hop.send(&ss.hop.down, hopMsg{kind: "askcancel", id: e.ID})
	case sessions.RefuseAsk:
		s.settle(q, "refused")
	case sessions.AnswerEnded:
		s.w.Tracef("member %s: question %d answered with its end (%s)", e.Session, e.ID, e.Why)
		s.settle(q, "ended")
	case sessions.PassAnswer:
		if answerer != q.session {
			s.w.violate("member: question %d (to %s) taken from %s's answer", e.ID, q.session, answerer)
		}
		if q.settled == 0 { // (a withdrawn question's answer is dropped, as remote's waiting map does)
			s.w.Tracef("member: question %d answered by %s", e.ID, answerer)
			s.settle(q, "answered")
		}
	}
}

// modelPick is the documented rule, from the member's record of calls.
func (s *sharedWorld) modelPick(server string) string {
	var named, unnamed *memberCall
	for _, sid := range s.order {
		if !s.core.Live(sid) {
			continue
		}
		for _, id := range slices.Sorted(maps.Keys(s.calls[sid])) {
			mc := s.calls[sid][id]
			if mc.seq == 0 || mc.finished || mc.gaveUp {
				continue
			}
			switch {
			case mc.server() == server && (named == nil || mc.seq < named.seq):
				named = mc
			case mc.server() == "" && (unnamed == nil || mc.seq < unnamed.seq):
				unnamed = mc
			}
		}
	}
	switch {
	case named != nil:
		return named.session
	case unnamed != nil:
		return unnamed.session
	}
	if sid := s.lastUse[server]; sid != "" && s.core.Live(sid) {
		return sid
	}
	for _, sid := range s.order {
		if s.core.Live(sid) {
			return sid
		}
	}
	return ""
}

// server is the server a call names for the rules ("" for none).
func (mc *memberCall) server() string {
	if mc.req.kind == "unsubscribe" || mc.req.kind == "list" {
		return ""
	}
	return mc.req.server
}

// openAsks returns the questions not yet settled, in order.
func (s *sharedWorld) openAsks() []uint64 {
	var out []uint64
	for id := uint64(1); id <= s.nextAsk; id++ {
		if s.asks[id].settled == 0 {
			out = append(out, id)
		}
	}
	return out
}

// checkAsks runs after Close: every question is settled.
func (s *sharedWorld) checkAsks() {
	for id := uint64(1); id <= s.nextAsk; id++ {
		if q := s.asks[id]; q.settled != 1 {
			s.w.violate("member: question %d (to %s) settled %d times after Close", id, q.session, q.settled)
		}
	}
}

func (q *simAsk) String() string { return fmt.Sprintf("question %d to %s", q.id, q.session) }
