package sessions

// A subscription whose last owner left is closing until the runtime's
// unsubscribe of it is done: the outcome of the last owner's unsubscribe
// call (CallDone, Forget), or Unsubscribed after an Unsubscribe effect.
// Meanwhile the runtime still has it live, so a subscribe of the same
// server, event and canonical arguments may be answered by reuse with it;
// such an answer is not taken as ownership (the new owner would keep a
// subscription the runtime is about to end): the subscribe waits (parked)
// until the end is done and then runs again (Rerun), when the runtime
// makes a fresh subscription, and its session gets that answer. A
// subscribe that was running when the end was done may still bring the
// ended subscription's id, and runs again at once; the id is remembered
// only while a subscribe that was running then still runs.
//
//	live --last owner leaves--> closing --runtime's unsubscribe done--> closed --those subscribes done--> forgotten
//
// A subscribe run again is not run again for the same subscription twice:
// if the runtime answers it with that id again (its unsubscribe did not
// end it), the answer is taken as any other.

// closing is a subscription its last owner left.
type closing struct {
	done   bool     // the runtime's unsubscribe of it is done
	at     uint64   // the last subscribe started when it was done (subSeq)
	parked []parked // subscribes waiting for it to be done
}

// parked is a subscribe waiting to run again.
type parked struct {
	session string
	id      uint64
}

// startSub counts call c as a subscribe running on the runtime.
func (m *Member) startSub(c *call) {
	m.subSeq++
	c.sseq = m.subSeq
	m.subRuns[c.sseq] = true
}

// endSub is the end of c's run (its outcome, or it is forgotten).
func (m *Member) endSub(c *call) {
	if c.sseq != 0 {
		delete(m.subRuns, c.sseq)
		c.sseq = 0
		m.prune()
	}
}

// stale reports whether sub, a subscribe's answer, is closing or closed
// (and c was not run again for it already).
func (m *Member) stale(c *call, sub string) bool {
	return m.closing[sub] != nil && sub != c.rerunOf
}

// park holds session sid's subscribe c, answered with sub, which is
// closing: it runs again when sub's end is done, or at once if it is.
func (m *Member) park(sid string, c *call, sub string, cl *closing, out []Effect) []Effect {
	if cl.done {
		return m.rerun(sid, c, sub, out)
	}
	c.parkedOn = sub
	cl.parked = append(cl.parked, parked{session: sid, id: c.id})
	return out
}

// closeSub marks sub closing: its last owner left.
func (m *Member) closeSub(sub string) {
	if cl := m.closing[sub]; cl == nil || cl.done {
		m.closing[sub] = &closing{}
	}
}

// rerun runs subscribe c of session sid again.
func (m *Member) rerun(sid string, c *call, sub string, out []Effect) []Effect {
	c.parkedOn, c.rerunOf = "", sub
	m.startSub(c)
	return append(out, Effect{Kind: Rerun, Session: sid, ID: c.id, Sub: sub})
}

// unpark drops session sid's parked call id (its session ended).
func (m *Member) unpark(sid string, id uint64, c *call) {
	if cl := m.closing[c.parkedOn]; cl != nil {
		for i, p := range cl.parked {
			if p.session == sid && p.id == id {
				cl.parked = append(cl.parked[:i:i], cl.parked[i+1:]...)
				break
			}
		}
	}
	c.parkedOn = ""
}

// Unsubscribed is the end of the runtime's unsubscribe of sub that an
// Unsubscribe effect asked for: the subscribes waiting for it run again.
func (m *Member) Unsubscribed(sub string) []Effect { return m.closed(sub) }

// closed marks sub's end done: its parked subscribes run again, in the
// order they were parked.
func (m *Member) closed(sub string) []Effect {
	cl := m.closing[sub]
	if cl == nil || cl.done {
		return nil
	}
	cl.done, cl.at = true, m.subSeq
	var out []Effect
	for _, p := range cl.parked {
		if c := m.sessions[p.session].callOf(p.id); c != nil && c.parkedOn == sub {
			out = m.rerun(p.session, c, sub, out)
		}
	}
	cl.parked = nil
	m.prune()
	return out
}

// prune forgets the closed subscriptions no running subscribe can name
// any more: every subscribe running when one was done has finished.
func (m *Member) prune() {
	first := m.subSeq + 1
	for q := range m.subRuns {
		first = min(first, q)
	}
	for sub, cl := range m.closing {
		if cl.done && cl.at < first {
			delete(m.closing, sub)
		}
	}
}

// Parked reports whether session sid's call id waits to run again.
func (m *Member) Parked(sid string, id uint64) bool {
	c := m.sessions[sid].callOf(id)
	return c != nil && c.parkedOn != ""
}

// Has reports whether session sid's call id is in flight: after its
// outcome (CallDone), when it is to run again (parked, or Rerun).
func (m *Member) Has(sid string, id uint64) bool { return m.sessions[sid].callOf(id) != nil }

// Closing returns how many subscriptions the member remembers as closing
// or closed (bounded: see above).
func (m *Member) Closing() int { return len(m.closing) }

// own makes sid an owner of sub.
func (m *Member) own(sub, sid string) {
	if m.owners[sub] == nil {
		m.owners[sub] = map[string]bool{}
	}
	m.owners[sub][sid] = true
}

// release ends sid's share of sub; last reports that no session owns it
// any more (the runtime's subscription is then to be ended).
func (m *Member) release(sub, sid string) (last bool) {
	set, ok := m.owners[sub]
	if !ok {
		return false
	}
	delete(set, sid)
	if len(set) > 0 {
		return false
	}
	delete(m.owners, sub)
	return true
}

func (m *Member) releaseOut(sub, sid string, out []Effect) []Effect {
	if m.release(sub, sid) {
		m.closeSub(sub) // until Unsubscribed(sub)
		out = append(out, Effect{Kind: Unsubscribe, Session: sid, Sub: sub})
	}
	return out
}
