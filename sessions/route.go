package sessions

// Which session a server's question goes to, and which sessions get which
// items of a wakeup.

// Pick chooses the session a question of server goes to ("" when none is
// attached). The protocol does not tie a server's request to the client
// request that caused it on stdio (nor on an HTTP server's standalone GET
// stream), so the member decides by the calls in flight, in this order:
//
//  1. the session with a call in flight naming that server (the oldest
//     such call, when several sessions have one);
//  2. else the session with a call in flight naming no server (an mcp
//     call resolved by tool name), the oldest first;
//  3. else the session whose call last named that server (the question
//     comes after the call, for example on the GET stream);
//  4. else the session attached first among those attached now.
//
// With one session calling a server at a time this is exactly the session
// whose call caused the question.
func (m *Member) Pick(server string) string {
	var named, unnamed string
	var namedSeq, unnamedSeq uint64
	for _, sid := range m.order {
		for _, c := range m.sessions[sid].calls {
			if !c.flying() {
				continue
			}
			switch {
			case c.server == server && (named == "" || c.seq < namedSeq):
				named, namedSeq = sid, c.seq
			case c.server == "" && (unnamed == "" || c.seq < unnamedSeq):
				unnamed, unnamedSeq = sid, c.seq
			}
		}
	}
	for _, sid := range []string{named, unnamed, m.lastUse[server]} {
		if sid != "" && m.Live(sid) {
			return sid
		}
	}
	if len(m.order) == 0 {
		return ""
	}
	return m.order[0]
}

// AskOut puts question id to session sid; a session that ended (or is
// unknown) refuses it at once.
func (m *Member) AskOut(sid string, id uint64) []Effect {
	s := m.live(sid)
	if s == nil {
		return []Effect{{Kind: RefuseAsk, Session: sid, ID: id}}
	}
	s.asks[id] = true
	return []Effect{{Kind: PassAsk, Session: sid, ID: id}}
}

// Withdraw is the server's withdrawal of question id (its request was
// cancelled): the session is told, if it still has it.
func (m *Member) Withdraw(sid string, id uint64) []Effect {
	s := m.live(sid)
	if s == nil || !s.asks[id] {
		return nil
	}
	delete(s.asks, id)
	return []Effect{{Kind: WithdrawAsk, Session: sid, ID: id}}
}

// Answer is the session's answer of question id: taken only when the
// question was put to this session and is still open.
func (m *Member) Answer(sid string, id uint64) []Effect {
	s := m.live(sid)
	if s == nil {
		return nil
	}
	out := m.touch(sid, s)
	if s.asks[id] {
		delete(s.asks, id)
		out = append(out, Effect{Kind: PassAnswer, Session: sid, ID: id})
	}
	return out
}

// Part is one session's share of a wakeup: the indexes of its items (the
// batch's dropped count goes to every part, see Split).
type Part struct {
	Session string
	Items   []int
}

// Split groups the n items of a wakeup by the sessions owning their
// subscriptions (sub(i) is item i's): an item of a subscription no session
// owns goes to every session. Every session with an item gets a part. The
// runtime cannot tell whose dropped items were, so a batch's dropped count
// goes to every session that may have lost some: every session with a
// part, and every session owning a subscription (an empty part: its
// items may all have been dropped; the shared campaign found a session
// whose 300 events were all dropped from a batch holding only another
// session's, told nothing, seed 689); when the wakeup has no item at all,
// to every session. Parts are in attach order.
func (m *Member) Split(n int, sub func(i int) string, dropped int) []Part {
	by := make(map[string][]int, len(m.order))
	for i := 0; i < n; i++ {
		set, owned := m.owners[sub(i)]
		for _, sid := range m.order {
			if !owned || set[sid] {
				by[sid] = append(by[sid], i)
			}
		}
	}
	var out []Part
	for _, sid := range m.order {
		idx := by[sid]
		if len(idx) == 0 && (dropped == 0 || (n > 0 && len(m.sessions[sid].subs) == 0)) {
			continue
		}
		out = append(out, Part{Session: sid, Items: idx})
	}
	return out
}
