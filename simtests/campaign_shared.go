package simtests

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"
)

// The shared campaign: the seed's servers (as the events campaign draws
// them, events included) behind a shared runtime's member, used by 2 to 4
// attached sessions (more attach as the run goes on) through hops whose
// latency the seed draws (none, up to 5 ms, 200 ms or 2 s each way). The
// sessions call tools, subscribe (often to the same identity as another
// session), unsubscribe (their own, another's, unknown), list, cancel,
// detach mid-call and mid-subscription, are partitioned away (healed
// before or after the member's 5 s timeout) or die; servers emit, crash
// and misbehave on their streams; time jumps. A checkpoint (the events
// accounting, globally and per session) and a quiesce end the steps; then
// the member stops and the runtime closes. Its own generator draws every
// step, so the plain and events campaigns of a seed stay what they were.
func CampaignShared(w *World) error {
	c, err := startEvents(w)
	if err != nil {
		return err
	}
	c.sr = rand.New(rand.NewPCG(w.Seed, 0x5a4ed))
	w.shared = newShared(w, 5*time.Second)
	lr := rand.New(rand.NewPCG(w.Seed, 0x11a175))
	tight := w.shared.sharedLimits(lr)
	typed := lr.IntN(2) == 0 // half the seeds use typed subscriptions (shared_typed.go)
	for i, n := 0, 2+c.sr.IntN(3); i < n; i++ {
		c.sharedAttach()
	}
	for i, n := 0, 15+c.sr.IntN(35); i < n; i++ {
		if tight && lr.IntN(8) == 0 {
			c.flood(lr)
			w.quiet()
		}
		if typed && lr.IntN(3) == 0 {
			c.typedStep(lr)
			w.quiet()
		}
		if err := c.sharedStep(); err != nil {
			return err
		}
	}
	if err := c.sharedCheckpoint(); err != nil {
		return err
	}
	if err := c.quiesce(); err != nil {
		return err
	}
	if c.sr.IntN(4) == 0 {
		for i, n := 0, 1+c.sr.IntN(6); i < n; i++ {
			if err := c.sharedStep(); err != nil {
				return err
			}
		}
	}
	return c.shutdown()
}

// sharedCheckpoint is the events checkpoint (global and per session)
// after 90 s with no new emission rather than the events campaign's five
// minutes: every session heartbeats every second meanwhile, and the
// episodes still running then (a reopen after a watchdog) only leave
// their subscriptions out of the accounting, which takes active ones.
func (c *campaign) sharedCheckpoint() error {
	w := c.w
	w.Tracef("checkpoint")
	if err := w.Advance(90 * time.Second); err != nil {
		return err
	}
	if err := w.Advance(time.Second); err != nil {
		return err
	}
	id := c.id("el")
	if err := w.Host.EventsList(id, true); err != nil {
		return err
	}
	return w.Host.Await(id)
}

// sharedAttach attaches a new session with a hop latency the seed draws.
func (c *campaign) sharedAttach() {
	sw := c.w.shared
	name := string(rune('A' + len(sw.order)%26))
	if len(sw.order) >= 26 {
		name += fmt.Sprint(len(sw.order) / 26)
	}
	lat := []time.Duration{0, 5 * time.Millisecond, 200 * time.Millisecond, 2 * time.Second}[c.sr.IntN(4)]
	sw.attach(name, lat)
}

// sharedSession draws with r a session that still works (nil: none
// does).
func (c *campaign) sharedSession(r *rand.Rand) *simSession {
	var live []*simSession
	for _, name := range c.w.shared.order {
		if ss := c.w.shared.sessions[name]; ss.gone == "" {
			live = append(live, ss)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live[r.IntN(len(live))]
}

// sharedIdentity draws a subscription identity from a small set, so that
// sessions often subscribe with the same one.
func (c *campaign) sharedIdentity(sr *rand.Rand) (*Server, *evTopic, string) {
	s := c.w.servers[c.w.order[sr.IntN(min(2, len(c.w.order)))]]
	t := s.topics[sr.IntN(min(2, len(s.topics)))]
	return s, t, []string{"", `{"path":"a"}`}[sr.IntN(2)]
}

// sharedStep is one step of the shared campaign.
func (c *campaign) sharedStep() error {
	w, sr, sw := c.w, c.sr, c.w.shared
	ss := c.sharedSession(sr)
	k := sr.IntN(100)
	if ss == nil && k < 51 {
		k = 51
	}
	switch {
	case k < 20:
		s := c.server()
		ss.request(&sharedReq{kind: "call", server: s.Name, tool: s.Tools[sr.IntN(len(s.Tools))], args: fmt.Sprintf(`{"n":%d}`, sr.IntN(1000))})
	case k < 32:
		s, t, args := c.sharedIdentity(sr)
		ss.request(&sharedReq{kind: "subscribe", server: s.Name, tool: t.name, args: args})
	case k < 38: // its own, another session's, or an unknown subscription
		var ids []string
		for _, o := range sw.order {
			ids = append(ids, keys(sw.sessions[o].subs)...)
		}
		id := "sub-unknown"
		if len(ids) > 0 && sr.IntN(6) != 0 {
			id = ids[sr.IntN(len(ids))]
		}
		if own := keys(ss.subs); len(own) > 0 && sr.IntN(2) == 0 {
			id = own[sr.IntN(len(own))]
		}
		ss.request(&sharedReq{kind: "unsubscribe", sub: id})
	case k < 41:
		ss.request(&sharedReq{kind: []string{"list", "status"}[sr.IntN(2)]})
	case k < 46:
		var open []uint64
		for _, id := range slices.Sorted(maps.Keys(ss.calls)) {
			if !ss.calls[id].done {
				open = append(open, id)
			}
		}
		if len(open) > 0 {
			ss.cancel(open[sr.IntN(len(open))])
		}
	case k < 48:
		ss.detach()
	case k < 50:
		sw.partition(ss.name, time.Duration(1+sr.IntN(12))*time.Second)
	case k < 51:
		sw.kill(ss.name)
	case k < 55:
		if len(sw.core.Sessions()) < 5 {
			c.sharedAttach()
		}
	case k < 72: // a server emits on one of the identities the sessions use
		s, t, _ := c.sharedIdentity(sr)
		n := 1 + sr.IntN(4)
		if sr.IntN(30) == 0 {
			n = 300
		}
		w.Tracef("%s ! emits %d %s", s.Name, n, t.name)
		return s.emit(t.name, n, 0)
	case k < 78:
		s, t, _ := c.sharedIdentity(sr)
		return c.evFault(s, t)
	case k < 80:
		if s := c.server(); len(s.liveConns()) > 0 {
			s.Crash("killed by the shared campaign")
		}
	case k < 92:
		return w.Advance(time.Duration(sr.Int64N(int64([]time.Duration{2 * time.Second, 8 * time.Second, 40 * time.Second}[sr.IntN(3)]))).Truncate(time.Millisecond))
	case k < 94: // a server's question
		sw.ask(c.server().Name)
	case k < 95: // the server withdraws a question
		if open := sw.openAsks(); len(open) > 0 {
			sw.withdraw(open[sr.IntN(len(open))])
		}
	case k < 96: // a session answers a question, its own or another's
		if open := sw.openAsks(); len(open) > 0 && ss != nil {
			ss.hop.send(&ss.hop.up, hopMsg{kind: "answer", id: open[sr.IntN(len(open))]})
		}
	case k < 98:
		for i, n := 0, 1+sr.IntN(20); i < n; i++ {
			w.quiet()
			if ran, err := w.step(true); err != nil || !ran {
				return err
			}
		}
		w.quiet()
	default:
		return c.quiesce()
	}
	w.quiet()
	return nil
}
