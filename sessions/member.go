package sessions

import (
	"maps"
	"slices"
)

// Member is the state of one member's sessions: each session's calls in
// flight, subscription shares, questions and liveness token, and the
// table shared by all of them (attach order, owners of each subscription,
// the calls that name servers).
type Member struct {
	sessions map[string]*session
	order    []string                   // live sessions in attach order
	owners   map[string]map[string]bool // subscription → the sessions owning it
	lastUse  map[string]string          // server → the session whose call last named it
	seq      uint64                     // orders the calls (Pick)
	closing  map[string]*closing        // subscription → its last owner's release (closing.go)
	subSeq   uint64                     // orders the subscribes' runs
	subRuns  map[uint64]bool            // the subscribes running (their subSeq)
	limits   Limits                     // each session's, unless attached with its own (limits.go)
}

// session is one attached session. It stays in sessions after it ended
// while a call of it is in flight (the call's late outcome may carry a
// subscription to release), and is forgotten with its last call.
type session struct {
	calls  map[uint64]*call
	subs   map[string]bool   // the subscriptions it owns
	typed  map[uint64]*typed // its typed subscriptions, by key (limits.go)
	limits Limits
	asks   map[uint64]bool   // questions put to it, unanswered
	beat   uint64            // the live timer's token
	reqs   uint64            // requests received, to order them
	left   map[string]uint64 // subscription → the last unsubscribe of it (its place among reqs)
	ended  bool
	stop   bool // ended, and its actor is to stop once no call is in flight
}

// call is a session's call in flight; cancelled is set when the session
// cancelled it (it no longer waits for the outcome).
type call struct {
	id        uint64
	server    string
	seq       uint64 // its order among the calls that count for questions (0: it does not count)
	req       uint64 // its place among the session's requests
	cancelled bool
	sseq      uint64 // a subscribe's run (its subSeq; 0 when not running a subscribe)
	subscribe bool   // an mcp_events subscribe: it may make a subscription
	typed     bool   // a typed subscribe, of key
	key       uint64
	closes    string // an unsubscribe by the last owner: the subscription it ends
	parkedOn  string // a subscribe waiting for that subscription's end, to run again
	rerunOf   string // a subscribe run again: the subscription it was run again for
}

// New returns a member with no session, whose sessions have no limits
// (SetLimits).
func New() *Member {
	return &Member{sessions: map[string]*session{}, owners: map[string]map[string]bool{}, lastUse: map[string]string{},
		closing: map[string]*closing{}, subRuns: map[uint64]bool{}}
}

// SetLimits sets the limits of the sessions attached from now on.
func (m *Member) SetLimits(l Limits) { m.limits = l }

// Attach adds a session with the member's limits; it must be new. It
// returns the timer's first arming.
func (m *Member) Attach(sid string) []Effect { return m.AttachWith(sid, m.limits) }

// AttachWith adds a session with limits l (another member's session,
// which carries its member's sessions' requests, has none).
func (m *Member) AttachWith(sid string, l Limits) []Effect {
	s := &session{calls: map[uint64]*call{}, subs: map[string]bool{}, asks: map[uint64]bool{}, left: map[string]uint64{},
		typed: map[uint64]*typed{}, limits: l}
	m.sessions[sid] = s
	m.order = append(m.order, sid)
	return m.touch(sid, s)
}

// live returns the session sid if it has not ended.
func (m *Member) live(sid string) *session {
	if s := m.sessions[sid]; s != nil && !s.ended {
		return s
	}
	return nil
}

// Live reports whether session sid is attached and has not ended.
func (m *Member) Live(sid string) bool { return m.live(sid) != nil }

// Sessions returns the live sessions in attach order.
func (m *Member) Sessions() []string { return append([]string(nil), m.order...) }

// InFlight returns the ids of session sid's calls in flight (ended or
// not), in increasing order.
func (m *Member) InFlight(sid string) []uint64 {
	s := m.sessions[sid]
	if s == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(s.calls))
}

// Owners returns the sessions owning subscription sub, sorted.
func (m *Member) Owners(sub string) []string {
	return slices.Sorted(maps.Keys(m.owners[sub]))
}

// touch re-arms the liveness timer: any message of a session is a sign
// of life. It starts the message's effects, with room for the one most
// messages add (a request's Run).
func (m *Member) touch(sid string, s *session) []Effect {
	s.beat++
	return append(make([]Effect, 0, 2), Effect{Kind: Arm, Session: sid, Beat: s.beat})
}

// Alive is a message of the session that carries nothing for the rules.
func (m *Member) Alive(sid string) []Effect {
	s := m.live(sid)
	if s == nil {
		return nil
	}
	return m.touch(sid, s)
}

// Heartbeat is the session's heartbeat: it is answered.
func (m *Member) Heartbeat(sid string) []Effect {
	s := m.live(sid)
	if s == nil {
		return nil
	}
	return append(m.touch(sid, s), Effect{Kind: HeartbeatAck, Session: sid})
}

// Expired is the liveness timer's firing with token beat: the session
// ends (why) unless a later message re-armed the timer.
func (m *Member) Expired(sid string, beat uint64, why string) []Effect {
	s := m.live(sid)
	if s == nil || s.beat != beat {
		return nil
	}
	return m.End(sid, why, true)
}

// Detach is the session's detach: it ends.
func (m *Member) Detach(sid string, why string) []Effect {
	s := m.live(sid)
	if s == nil {
		return nil
	}
	return m.End(sid, why, true)
}

// Request is a session's request.
func (m *Member) Request(sid string, r Request) []Effect {
	s := m.live(sid)
	if s == nil {
		return nil
	}
	out := m.touch(sid, s)
	if s.calls[r.ID] != nil {
		return append(out, Effect{Kind: ReplyDuplicate, Session: sid, ID: r.ID})
	}
	if e, refused := s.refuse(sid, r); refused {
		return append(out, e)
	}
	s.reqs++
	var filter map[string]bool
	switch r.Action {
	case "unsubscribe":
		if r.Sub != "" {
			s.left[r.Sub] = s.reqs // a subscribe sent before this one no longer makes it an owner
		}
		if r.Sub == "" || !s.subs[r.Sub] {
			// Not this session's: nothing of another session is
			// touched; the answer is the tool's own for an unknown id.
			return append(out, Effect{Kind: ReplyStopped, Session: sid, ID: r.ID})
		}
		delete(s.subs, r.Sub)
		if !m.release(r.Sub, sid) {
			return append(out, Effect{Kind: ReplyStopped, Session: sid, ID: r.ID}) // others still use it
		}
		// The last owner: the runtime ends it; the subscription is
		// closing until this call's outcome comes.
	case ActionTypedUnsubscribe: // its Stop: the session no longer holds it
		delete(s.typed, r.Key)
	case "list":
		filter = make(map[string]bool, len(s.subs))
		for id := range s.subs {
			filter[id] = true
		}
	}
	c := &call{id: r.ID, server: r.Server, req: s.reqs}
	if r.Counts {
		m.seq++
		c.seq = m.seq
		if r.Server != "" {
			m.lastUse[r.Server] = sid
		}
	}
	switch r.Action {
	case "subscribe":
		c.subscribe = true
		m.startSub(c)
	case ActionTypedSubscribe:
		c.typed, c.key = true, r.Key
		s.typed[r.Key] = &typed{id: r.ID}
	case "unsubscribe":
		c.closes = r.Sub
		m.closeSub(r.Sub)
	}
	s.calls[r.ID] = c
	return append(out, Effect{Kind: Run, Session: sid, ID: r.ID, Filter: filter})
}

// Cancel is the session's cancel of call id.
func (m *Member) Cancel(sid string, id uint64) []Effect {
	s := m.live(sid)
	if s == nil {
		return nil
	}
	out := m.touch(sid, s)
	if c := s.calls[id]; c != nil {
		c.cancelled = true
		if c.closes == "" {
			out = append(out, Effect{Kind: CancelCall, Session: sid, ID: id})
		}
		// An unsubscribe by the last owner runs to its end: cancelled on
		// its way, it would leave the runtime's subscription live with
		// no owner (and its stream open) for good.
	}
	return out
}

// CallDone is the outcome of call id; sub is the subscription it made
// (an mcp_events subscribe), if any: the session owns it from now on, or
// releases it at once when the session has ended, cancelled the call (it
// will never learn the subscription's id) or unsubscribed from that
// subscription after sending this subscribe (its last word wins). A
// subscription its last owner is ending, or ended while this subscribe
// ran, is not taken: the subscribe runs again (Rerun) once that end is
// done (closing.go), and its session gets that answer.
func (m *Member) CallDone(sid string, id uint64, sub string) []Effect {
	s := m.sessions[sid]
	c := s.callOf(id)
	if c == nil {
		return nil
	}
	var out []Effect
	if c.typed {
		out, sub = m.typedDone(sid, s, c, sub, out), ""
	}
	var cl *closing // sub, when its last owner is ending it or ended it
	if sub != "" && !s.subs[sub] && m.stale(c, sub) {
		cl = m.closing[sub] // taken before endSub may forget it
	}
	m.endSub(c)
	if cl != nil {
		if !s.ended && !c.cancelled && c.req >= s.left[sub] {
			return m.park(sid, c, sub, cl, out)
		}
		sub = "" // nobody owns it: nothing to release
	}
	delete(s.calls, id)
	if sub != "" && !s.subs[sub] {
		s.subs[sub] = true
		m.own(sub, sid)
		if s.ended || c.cancelled || c.req < s.left[sub] {
			delete(s.subs, sub)
			out = m.releaseOut(sub, sid, out)
		}
	}
	if !s.ended {
		out = append(out, Effect{Kind: Reply, Session: sid, ID: id})
	}
	out = m.forgetEnded(sid, s, out)
	if c.closes != "" {
		out = append(out, m.closed(c.closes)...)
	}
	return out
}

// Forget drops call id, whose outcome will never be taken (the member
// refused to run it as it closes, or the session's actor crashed on it
// twice): nothing is answered; a subscription it made (sub) is released
// at once, as the session will never learn its id.
func (m *Member) Forget(sid string, id uint64, sub string) []Effect {
	s := m.sessions[sid]
	c := s.callOf(id)
	if c == nil {
		return nil
	}
	stale := sub != "" && m.stale(c, sub) // nobody owns it: nothing to release
	m.endSub(c)
	delete(s.calls, id)
	var out []Effect
	if c.typed {
		out, sub = m.typedDone(sid, s, c, "", out), ""
	}
	if sub != "" && !s.subs[sub] && !stale {
		m.own(sub, sid)
		out = m.releaseOut(sub, sid, out)
	}
	out = m.forgetEnded(sid, s, out)
	if c.closes != "" {
		out = append(out, m.closed(c.closes)...)
	}
	return out
}

// flying reports whether c counts for questions (Pick): it may reach a
// server and the session did not cancel it.
func (c *call) flying() bool { return c.seq != 0 && !c.cancelled }

func (s *session) callOf(id uint64) *call {
	if s == nil {
		return nil
	}
	return s.calls[id]
}

// End ends session sid (detach, timeout, its connection's end, the
// member's shutdown): its calls are cancelled and answered once, it is
// told, its questions are answered with the error, its subscription
// shares are released (a runtime subscription ends with its last owner).
// With stop, its actor is to stop once no call of it is in flight.
func (m *Member) End(sid, why string, stop bool) []Effect {
	s := m.live(sid)
	if s == nil {
		return nil
	}
	s.ended, s.stop = true, stop
	out := []Effect{{Kind: StopTimer, Session: sid}}
	ids := slices.Sorted(maps.Keys(s.calls))
	for _, id := range ids {
		if s.calls[id].closes == "" { // the last owner's unsubscribe runs to its end (Cancel)
			out = append(out, Effect{Kind: CancelCall, Session: sid, ID: id})
		}
		out = append(out, Effect{Kind: ReplyEnded, Session: sid, ID: id, Why: why})
		if c := s.calls[id]; c.parkedOn != "" { // no outcome is on its way
			m.unpark(sid, id, c)
			delete(s.calls, id)
		}
	}
	out = append(out, Effect{Kind: Ended, Session: sid, Why: why, Calls: len(ids), Subs: len(s.subs) + len(s.typed)})
	out = s.endTyped(sid, out)
	for _, id := range slices.Sorted(maps.Keys(s.asks)) {
		out = append(out, Effect{Kind: AnswerEnded, Session: sid, ID: id, Why: why})
	}
	s.asks = map[uint64]bool{}
	for _, sub := range slices.Sorted(maps.Keys(s.subs)) {
		delete(s.subs, sub)
		out = m.releaseOut(sub, sid, out)
	}
	for i, id := range m.order {
		if id == sid {
			m.order = append(m.order[:i:i], m.order[i+1:]...)
			break
		}
	}
	return m.forgetEnded(sid, s, out)
}

// forgetEnded forgets session sid once it has ended and its last call is
// done; its actor then stops if its end said so.
func (m *Member) forgetEnded(sid string, s *session, out []Effect) []Effect {
	if s.ended && len(s.calls) == 0 {
		delete(m.sessions, sid)
		if s.stop {
			out = append(out, Effect{Kind: Stop, Session: sid})
		}
	}
	return out
}
