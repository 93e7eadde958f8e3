package simtests

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/sessions"
)

// The shared runtime's member, simulated: the real runtime (the World's)
// is the member's runtime, package sessions' rules (the same
// sessions.Member remote's session actors execute) decide, and this shell
// executes their effects: a session's call runs as a host operation of the
// World (a tool call through the mcp tool naming its server, an mcp_events
// subscribe, unsubscribe or list, a status query), cancelling it cancels
// that operation, replies and ends cross the session's hop, the runtime's
// wakeups are split among the sessions (sessions.Member.Split, rebuilt as
// remote's router does with eventstream.EventsWakeup) and cross their hops.
//
// Inputs from hops and timers are queued and run between steps (pump),
// because running a call starts a host operation, which must not happen
// inside an activation.

// sharedWorld is the member and its sessions.
type sharedWorld struct {
	w                  *World
	core               *sessions.Member
	timeout, heartbeat time.Duration
	sessions           map[string]*simSession
	order              []string                // every session ever attached, in order
	timers             map[string][]*liveTimer // liveness timers armed, not yet fired (see Arm)
	inbox              []func()
	pumping            bool
	calls              map[string]map[uint64]*memberCall // session → call id → the member's record
	ops                map[string]*memberCall            // host operation id → the call it runs
	ended              map[string]bool                   // sessions the rules ended
	own                map[string]map[string]bool        // the model: subscription → its owners
	ending             map[string]bool                   // the model: subscriptions the member ended or is ending on the runtime
	unsubs             map[string]string                 // the member's own unsubscribe operations → their subscription
	left               map[string]map[string]uint64      // the model: session → subscription → its last unsubscribe
	heard              map[string]time.Duration          // session → when its last message reached the member
	asks               map[uint64]*simAsk                // the questions put (shared_asks.go)
	nextAsk, seq       uint64                            // question ids; the calls' order
	lastUse            map[string]string                 // server → the session whose call last named it
	answering          string                            // the session whose answer is being taken
	acts               int                               // activations of the member and its hops queued
	n                  int                               // the member's own operations
	closed, checked    bool
	kills              []clock.Timer   // a dead session's connection end, on its way to the member
	posts              []*post         // calls' outcomes on their way to the rules
	holding            bool            // outcomes are held (scenario files: "outcomes hold")
	held               []func()        // the outcomes held, in order
	rng                *rand.Rand      // their delays
	limits             sessions.Limits // each session's (shared_limits.go)
	typed              []*typedRec     // typed subscriptions made, in order (shared_typed.go)
}

// liveTimer is a liveness timer of the member.
type liveTimer struct {
	t     clock.Timer
	fired bool
}

// memberCall is a request the member received while its session lived.
type memberCall struct {
	session   string
	id        uint64
	req       *sharedReq
	op        string          // the host operation running it ("" when answered without running)
	filter    map[string]bool // a list's: the session's own subscriptions
	answers   int
	cancelled bool   // its host operation was cancelled
	gaveUp    bool   // the session cancelled it
	seq       uint64 // its order among the calls that count for questions (0: it does not)
	finished  bool   // its outcome reached the rules
	runs      int    // its runs on the runtime (a subscribe runs again: sessions.Rerun)
	rerunOf   string // the subscription it last ran again for
	held      bool   // the member holds it: run, its outcome not yet taken for good
}

func newShared(w *World, timeout time.Duration) *sharedWorld {
	core := sessions.New()
	core.SetLimits(sessions.DefaultLimits())
	return &sharedWorld{w: w, core: core, limits: sessions.DefaultLimits(), rng: rand.New(rand.NewPCG(w.Seed, 0x9057)), timeout: timeout, heartbeat: time.Second,
		sessions: map[string]*simSession{}, timers: map[string][]*liveTimer{}, calls: map[string]map[uint64]*memberCall{},
		ops: map[string]*memberCall{}, ended: map[string]bool{}, own: map[string]map[string]bool{}, ending: map[string]bool{}, unsubs: map[string]string{}, left: map[string]map[string]uint64{}, heard: map[string]time.Duration{},
		asks: map[uint64]*simAsk{}, lastUse: map[string]string{}}
}

// attach attaches a new session whose hop takes up to maxLat each way.
func (s *sharedWorld) attach(name string, maxLat time.Duration) *simSession {
	ss := &simSession{sw: s, name: name, calls: map[uint64]*sessCall{}, subs: map[string]*sessSub{}, left: map[string]uint64{}, got: map[string]map[string]bool{}, typed: map[uint64]bool{}}
	ss.hop = newHop(s.w, name, maxLat, uint64(0x40b0+len(s.order)),
		func(m hopMsg) { s.inbox = append(s.inbox, func() { s.fromSession(name, m) }) }, ss.receive)
	ss.hop.sched = s.schedule
	s.sessions[name] = ss
	s.order = append(s.order, name)
	s.calls[name] = map[uint64]*memberCall{}
	s.heard[name] = s.w.Now()
	s.w.Tracef("%s attaches (hop latency up to %s)", name, maxLat)
	ss.heard = s.w.Now()
	ss.arm()
	s.exec(s.core.Attach(name), nil, nil)
	sharedTotals.sessions.Add(1)
	return ss
}

// pump runs the queued inputs (between steps: see above).
func (s *sharedWorld) pump() {
	if s.pumping {
		return
	}
	s.pumping = true
	for len(s.inbox) > 0 {
		f := s.inbox[0]
		s.inbox = s.inbox[1:]
		f()
	}
	s.pumping = false
	if s.w.Host.closed && !s.checked {
		s.checked = true
		s.afterClose()
	}
}

// fromSession is a message of a session reaching the member.
func (s *sharedWorld) fromSession(sid string, m hopMsg) {
	s.heard[sid] = s.w.Now()
	switch m.kind {
	case "request":
		live := s.core.Live(sid)
		mc := &memberCall{session: sid, id: m.id, req: m.req}
		if live {
			s.calls[sid][m.id] = mc
		}
		r := sessions.Request{ID: m.id, Server: m.req.server, Counts: m.req.kind != "status"}
		var want []string
		switch m.req.kind {
		case "unsubscribe":
			r.Action, r.Sub, r.Server = "unsubscribe", m.req.sub, ""
			if live {
				if s.left[sid] == nil {
					s.left[sid] = map[string]uint64{}
				}
				s.left[sid][r.Sub] = m.id
			}
			if live && s.own[r.Sub][sid] {
				if delete(s.own[r.Sub], sid); len(s.own[r.Sub]) == 0 {
					want = []string{"run " + r.Sub} // the last owner: the runtime ends it
					s.ending[r.Sub] = true
				}
			}
		case "list":
			r.Action, r.Server = "list", ""
		case "subscribe":
			r.Action = "subscribe"
		case "typed", "typedstop":
			r = s.typedRequest(sid, m.id, m.req, live)
		}
		calls, subs := s.modelHeld(sid)
		effs := s.core.Request(sid, r)
		if live {
			s.checkLimits(sid, r, calls, subs, effs)
		}
		if live && m.req.kind == "unsubscribe" {
			got := []string{}
			for _, e := range effs {
				if e.Kind == sessions.Run {
					got = append(got, "run "+r.Sub)
				}
			}
			if want == nil {
				want = []string{}
			}
			if !slices.Equal(got, want) {
				s.w.violate("member: %s's unsubscribe of %s ran %v on the runtime, want %v (owners now %v)", sid, r.Sub, got, want, keys(s.own[r.Sub]))
			}
		}
		s.exec(effs, mc, nil)
	case "cancel":
		if mc := s.calls[sid][m.id]; mc != nil && s.core.Live(sid) && slices.Contains(s.core.InFlight(sid), m.id) {
			mc.gaveUp = true
		}
		s.exec(s.core.Cancel(sid, m.id), nil, nil)
	case "heartbeat":
		s.exec(s.core.Heartbeat(sid), nil, nil)
	case "answer":
		s.answering = sid
		s.exec(s.core.Answer(sid, m.id), nil, nil)
		s.answering = ""
	case "detach":
		s.end(sid, func() []sessions.Effect { return s.core.Detach(sid, "it detached") })
	}
}

// end runs an input that may end session sid and checks what its end
// released: every subscription it owned whose last owner it was, and no
// other; and every call of it still running was cancelled (but a last owner's unsubscribe).
func (s *sharedWorld) end(sid string, input func() []sessions.Effect) {
	was := s.core.Live(sid)
	effs := input()
	if !was || s.core.Live(sid) {
		s.exec(effs, nil, nil)
		return
	}
	want := []string{}
	for _, sub := range keys(s.own) {
		if s.own[sub][sid] {
			if delete(s.own[sub], sid); len(s.own[sub]) == 0 {
				want = append(want, sub)
			}
		}
	}
	s.checkUnsubs(sid+"'s end", effs, want)
	s.exec(effs, nil, nil)
	for _, id := range slices.Sorted(maps.Keys(s.calls[sid])) {
		if mc := s.calls[sid][id]; mc.op != "" && !s.w.Host.byID[mc.op].done && !mc.cancelled && mc.req.kind != "unsubscribe" {
			s.w.violate("member: %s ended, but its call %d (%s) still runs uncancelled: its lease would stay", sid, id, mc.op)
		}
	}
}

// opDone is a host operation finishing: if it ran a session's call, the
// rules get its outcome.
func (s *sharedWorld) opDone(op *hostOp) {
	mc := s.ops[op.id]
	if mc == nil {
		if sub, ok := s.unsubs[op.id]; ok { // the member's own unsubscribe is done
			delete(s.unsubs, op.id)
			s.post(func() { s.exec(s.core.Unsubscribed(sub), nil, nil) })
		}
		return
	}
	// The outcome reaches the rules later, in an activation of its own or
	// after a delay the seed draws (in remote, the call's goroutine posts
	// it to the session's actor, whenever the Go scheduler runs it), so
	// the session's end or cancel may come first.
	s.post(func() {
		mc.finished = true
		sub, join := "", 0
		if mc.req.kind == "subscribe" && op.res.ok && len(op.res.snaps) == 1 {
			sub = op.res.snaps[0].ID
			join = s.w.inv.ev().emitted[evKey(op.res.snaps[0].Server, op.res.snaps[0].Name)]
		}
		var want []string
		stale := sub != "" && s.ending[sub] && sub != mc.rerunOf
		if stale {
			// Answered by reuse with a subscription the member is ending
			// (or ended): taken by nobody, nothing to release; it runs
			// again unless the session gave up on it.
			want = []string{}
		} else if sub != "" {
			if s.ended[mc.session] || mc.gaveUp || mc.id < s.left[mc.session][sub] {
				if len(s.own[sub]) == 0 {
					want = []string{sub} // answered after its session ended or gave up: released at once
				}
			} else {
				if s.own[sub] == nil {
					s.own[sub] = map[string]bool{}
				}
				s.own[sub][mc.session] = true
			}
		}
		effs := s.core.CallDone(mc.session, mc.id, sub)
		if want == nil {
			want = []string{}
		}
		again := stale && !s.ended[mc.session] && !mc.gaveUp && mc.id >= s.left[mc.session][sub] // the model's
		if got := s.core.Has(mc.session, mc.id); got != again {
			s.w.violate("member: %s's subscribe %d answered with %s (ending: %v): run again %v", mc.session, mc.id, sub, stale, got)
		} else if again {
			mc.finished = false // still counts for questions, as in the rules
		}
		mc.held = again
		s.checkUnsubs(fmt.Sprintf("the outcome of %s's call %d", mc.session, mc.id), effs, want)
		res := op.res
		if mc.filter != nil {
			var kept []eventstream.Snapshot
			for _, snap := range res.snaps {
				if mc.filter[snap.ID] {
					kept = append(kept, snap)
				}
			}
			res.snaps, res.rows = kept, nil
			res.text = fmt.Sprintf("%d subscriptions", len(kept))
		}
		s.exec(effs, mc, &hopMsg{kind: "reply", id: mc.id, res: res, join: join})
	})
}

// exec executes the rules' effects in order. mc is the call the input
// concerned (a request, an outcome), reply the outcome to send.
func (s *sharedWorld) exec(effs []sessions.Effect, mc *memberCall, reply *hopMsg) {
	for _, e := range effs {
		ss := s.sessions[e.Session]
		switch e.Kind {
		case sessions.Arm:
			// The timer armed before is not stopped: in remote it may have
			// fired already, its expiry on its way to the actor; the
			// rules' token (Beat) must make it harmless.
			sid, beat, lt := e.Session, e.Beat, &liveTimer{}
			s.timers[sid] = append(s.timers[sid], lt)
			lt.t = s.w.Clock.AfterFunc(s.timeout, func() {
				lt.fired = true
				s.inbox = append(s.inbox, func() {
					s.end(sid, func() []sessions.Effect {
						effs := s.core.Expired(sid, beat, "no heartbeat within "+s.timeout.String())
						if len(effs) > 0 && s.w.Now()-s.heard[sid] < s.timeout {
							s.w.violate("member: %s ended for silence, but it was heard %s ago (timeout %s)", sid, s.w.Now()-s.heard[sid], s.timeout)
						}
						return effs
					})
				})
			})
			s.timers[sid] = slices.DeleteFunc(s.timers[sid], func(t *liveTimer) bool { return t.fired })
		case sessions.StopTimer:
			for _, t := range s.timers[e.Session] {
				t.t.Stop()
			}
			delete(s.timers, e.Session)
		case sessions.Run:
			mc.filter, mc.held = e.Filter, true
			if mc.req.kind != "status" && mc.req.key == 0 { // it counts for questions
				s.seq++
				mc.seq = s.seq
				if srv := mc.server(); srv != "" {
					s.lastUse[srv] = mc.session
				}
			}
			s.run(mc)
		case sessions.CancelCall:
			c := s.calls[e.Session][e.ID]
			s.w.Tracef("member %s: cancel %d", e.Session, e.ID)
			if c != nil && c.op != "" && !c.cancelled && !s.w.Host.byID[c.op].done {
				c.cancelled = true
				if err := s.w.Host.Cancel(c.op); err != nil {
					s.w.violate("member: cancelling %s: %v", c.op, err)
				}
			}
		case sessions.Reply:
			if mc.req.kind == "subscribe" && reply.res.ok && len(reply.res.snaps) == 1 {
				if sub := reply.res.snaps[0].ID; s.ending[sub] && slices.Contains(s.core.Owners(sub), e.Session) {
					s.w.violate("member: %s's subscribe %d is answered with %s, which the member ended or is ending on the runtime, and it owns it", e.Session, e.ID, sub)
				}
			}
			s.answer(e, *reply)
		case sessions.Rerun:
			c := s.calls[e.Session][e.ID]
			s.w.Tracef("member %s: %s", e.Session, e)
			c.rerunOf, c.cancelled = e.Sub, false
			c.runs++
			sharedTotals.reruns.Add(1)
			s.run(c)
		case sessions.EndTyped:
			s.endTyped(e)
		case sessions.Refuse:
			s.answer(e, hopMsg{kind: "reply", id: e.ID, res: outcome{code: "resource_exhausted", text: e.Why}})
		case sessions.ReplyDuplicate:
			s.answer(e, hopMsg{kind: "reply", id: e.ID, res: outcome{code: "invalid_arguments", text: "already in flight"}})
		case sessions.ReplyStopped:
			s.answer(e, hopMsg{kind: "reply", id: e.ID, res: outcome{ok: true, text: `{"stopped":true}`}})
		case sessions.ReplyEnded:
			s.answer(e, hopMsg{kind: "reply", id: e.ID, res: endedOutcome(e.Why)})
		case sessions.Ended:
			s.ended[e.Session] = true
			sharedTotals.ended.Add(1)
			s.w.Tracef("member %s: ended (%s) with %d call(s) and %d subscription(s)", e.Session, e.Why, e.Calls, e.Subs)
			ss.hop.send(&ss.hop.down, hopMsg{kind: "ended", res: endedOutcome(e.Why)})
			if ss.hop.held {
				ss.hop.cut("the member gave up on it") // remote aborts a silent session's link
			}
		case sessions.HeartbeatAck:
			ss.hop.send(&ss.hop.down, hopMsg{kind: "ack"})
		case sessions.Unsubscribe:
			s.n++
			id := fmt.Sprintf("m.u%d", s.n)
			s.w.Tracef("member %s: unsubscribe %s (its last owner left)", e.Session, e.Sub)
			s.ending[e.Sub] = true
			s.unsubs[id] = e.Sub
			if err := s.w.Host.Unsubscribe(id, e.Sub); err != nil {
				s.w.violate("member: %v", err)
			}
		case sessions.Stop:
			s.w.Tracef("member %s: stopped", e.Session)
		case sessions.PassAsk, sessions.WithdrawAsk, sessions.RefuseAsk, sessions.AnswerEnded, sessions.PassAnswer:
			s.askEffect(e, s.answering)
		default:
			s.w.violate("member: unexpected effect %s (the simulated servers ask no questions)", e)
		}
	}
}
