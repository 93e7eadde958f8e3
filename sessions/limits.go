package sessions

import (
	"fmt"
	"maps"
	"slices"
)

// A session's own limits: what one session may hold on the member, so
// that no session can starve the others of the member runtime's shared
// budgets (its 100 event subscriptions, its pool of call goroutines). A
// request beyond a limit is refused at once (Refuse), never queued, and
// touches nothing of the session or of any other session.
//
//   - Subscriptions: those the session owns (its share of an mcp_events
//     subscription counts once for each owning session, however many
//     share it), its typed subscriptions (made or being made), and its
//     mcp_events subscribes in flight (each may make one). A subscribe
//     (events or typed) is refused when these reach Limits.Subs.
//   - Calls in flight: every request of the session the member holds
//     (running, cancelled but not yet finished, waiting to run again). A
//     request is refused when they reach Limits.Calls. Unsubscribes (an
//     mcp_events unsubscribe, a typed Stop) are never refused: they only
//     give back, and at most one runs per subscription the session held.

// Limits are one session's limits; 0 is no limit.
type Limits struct {
	Subs  int // subscriptions held, those being made included
	Calls int // calls in flight
}

// The default limits of a session: a quarter of the member runtime's 100
// event subscriptions, so four sessions at their limit still leave none
// without; 64 calls in flight, far above what an agent session runs at
// once (the pool's goroutines are shared by all sessions).
const (
	DefaultMaxSubs  = 25
	DefaultMaxCalls = 64
)

// DefaultLimits are the limits a member gives each session unless
// configured otherwise.
func DefaultLimits() Limits { return Limits{Subs: DefaultMaxSubs, Calls: DefaultMaxCalls} }

// Refusal says which limit a Refuse effect is for.
type Refusal int

// The refusals.
const (
	// RefusedSubs: the session holds Limits.Subs subscriptions.
	RefusedSubs Refusal = iota + 1
	// RefusedCalls: the session has Limits.Calls calls in flight.
	RefusedCalls
	// RefusedKey: a typed subscribe names a key the session uses already.
	RefusedKey
)

func (r Refusal) String() string {
	switch r {
	case RefusedSubs:
		return "subscriptions"
	case RefusedCalls:
		return "calls"
	case RefusedKey:
		return "key"
	}
	return fmt.Sprintf("refusal(%d)", int(r))
}

// The actions of a typed subscription (Request.Action), keyed by
// Request.Key, the session's name for it.
const (
	ActionTypedSubscribe   = "typed-subscribe"
	ActionTypedUnsubscribe = "typed-unsubscribe"
)

// typed is a typed subscription of a session: made (owned), or being made
// by its subscribe call id.
type typed struct {
	id    uint64 // the subscribe's call id
	owned bool   // its subscribe's outcome was taken: the session holds it
	gone  bool   // it ended on its own before its subscribe's outcome came
}

// subsHeld is what counts against s's Limits.Subs.
func (s *session) subsHeld() int {
	n := len(s.subs) + len(s.typed)
	for _, c := range s.calls {
		if c.subscribe {
			n++
		}
	}
	return n
}

// refuse checks request r of session s against its limits; a refusal is
// the effect answering it.
func (s *session) refuse(sid string, r Request) (Effect, bool) {
	e := Effect{Kind: Refuse, Session: sid, ID: r.ID}
	switch r.Action {
	case "unsubscribe", ActionTypedUnsubscribe:
		return e, false // only gives back
	}
	if r.Action == ActionTypedSubscribe && s.typed[r.Key] != nil {
		e.Refused, e.Why = RefusedKey, fmt.Sprintf("typed subscription %d is already this session's", r.Key)
		return e, true
	}
	if n := len(s.calls); s.limits.Calls > 0 && n >= s.limits.Calls {
		e.Refused, e.Count, e.Limit = RefusedCalls, n, s.limits.Calls
		e.Why = fmt.Sprintf("this session has %d calls in flight, its limit of %d on this shared runtime: wait for one to end (other sessions are not affected)", n, s.limits.Calls)
		return e, true
	}
	if r.Action != "subscribe" && r.Action != ActionTypedSubscribe {
		return e, false
	}
	if n := s.subsHeld(); s.limits.Subs > 0 && n >= s.limits.Subs {
		e.Refused, e.Count, e.Limit = RefusedSubs, n, s.limits.Subs
		e.Why = fmt.Sprintf("this session holds %d subscriptions (mcp_events and typed, those being made included), its limit of %d on this shared runtime: unsubscribe one first (other sessions are not affected)", n, s.limits.Subs)
		return e, true
	}
	return e, false
}

// typedDone takes the outcome of typed subscribe c of session sid: sub is
// the subscription's id ("" when the subscribe failed). The session holds
// it when it was answered and is still the session's (not stopped, not
// given up, not ended); else it is ended (EndTyped). One that ended on its
// own meanwhile is answered and forgotten: its final status follows the
// answer.
func (m *Member) typedDone(sid string, s *session, c *call, sub string, out []Effect) []Effect {
	t := s.typed[c.key]
	mine := t != nil && t.id == c.id
	if mine && sub != "" && !s.ended && !c.cancelled {
		if t.gone {
			delete(s.typed, c.key)
		} else {
			t.owned = true
		}
		return out
	}
	if mine {
		delete(s.typed, c.key)
	}
	return append(out, Effect{Kind: EndTyped, Session: sid, ID: c.id, Key: c.key})
}

// TypedGone is the end on its own (its final status, an overrun) of
// session sid's typed subscription key, made by subscribe id: it no
// longer counts.
func (m *Member) TypedGone(sid string, key, id uint64) {
	s := m.sessions[sid]
	if s == nil {
		return
	}
	if t := s.typed[key]; t != nil && t.id == id {
		if t.owned {
			delete(s.typed, key)
		} else {
			t.gone = true
		}
	}
}

// endTyped ends every typed subscription of s, made or being made (its
// end).
func (s *session) endTyped(sid string, out []Effect) []Effect {
	for _, k := range slices.Sorted(maps.Keys(s.typed)) {
		out = append(out, Effect{Kind: EndTyped, Session: sid, ID: s.typed[k].id, Key: k})
		delete(s.typed, k)
	}
	return out
}

// Typed returns the keys of session sid's typed subscriptions, made or
// being made, in increasing order.
func (m *Member) Typed(sid string) []uint64 {
	s := m.sessions[sid]
	if s == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(s.typed))
}

// Held returns what counts against session sid's subscription limit.
func (m *Member) Held(sid string) int {
	if s := m.sessions[sid]; s != nil {
		return s.subsHeld()
	}
	return 0
}
