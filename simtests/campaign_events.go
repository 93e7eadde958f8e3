package simtests

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// The events campaign: the same random session as Campaign (the same
// servers, tools, lifecycles and fault rates for the seed), where every
// server also speaks events and half of the steps are events work:
// subscriptions (reused, unknown, poll-only, with cursors and maxAgeMs),
// unsubscribes, listings and catalogs, emissions (now and then a burst past
// the batch caps or an event past the preview size), heartbeats,
// duplicates, gaps, upstream errors, terminations, stalls past the
// watchdog, malformed frames, stream ends with and without a numeric code,
// catalog changes, crashes, and time jumps long enough for retries and
// watchdogs. Its own generator draws the events steps, so the plain
// campaign of a seed stays what it was. Every run then has a checkpoint
// (the accounting invariant, checker.evAccount) and a lease check, and
// one in four a few more steps before shutdown.
func CampaignEvents(w *World) error {
	c, err := startEvents(w)
	if err != nil {
		return err
	}
	cr := rand.New(rand.NewPCG(w.Seed, 0xc4a5)) // the crash fault's own draws
	for i, n := 0, 20+c.er.IntN(80); i < n; i++ {
		c.maybeCrash(cr)
		if err := c.evStep(); err != nil {
			return err
		}
	}
	// Every run ends its steps with a checkpoint (the accounting) and a
	// lease check with nothing in flight; one in four then goes on for a
	// few more steps, so that Close also comes amid events work.
	more := c.er.IntN(4) == 0
	if err := c.evCheckpoint(); err != nil {
		return err
	}
	if err := c.quiesce(); err != nil {
		return err
	}
	if more {
		for i, n := 0, 1+c.er.IntN(6); i < n; i++ {
			if err := c.evStep(); err != nil {
				return err
			}
		}
	}
	return c.shutdown()
}

// startEvents starts the world of the events campaign (and of the shared
// one, which draws it the same way): the seed's servers, each speaking
// events.
func startEvents(w *World) (*campaign, error) {
	c := &campaign{w: w, r: rand.New(rand.NewPCG(w.Seed, 0xca4a)), er: rand.New(rand.NewPCG(w.Seed, 0xe7e7)), events: true}
	c.configure()
	c.configureEvents()
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	return c, nil
}

// evStep is one step of the events campaign: events work or, as often,
// a step of the plain campaign.
func (c *campaign) evStep() error {
	if c.er.IntN(2) == 0 {
		return c.eventsOp()
	}
	return c.op()
}

// configureEvents gives every server two or three event types (one of
// them sometimes poll-only), a retention and a heartbeat interval.
func (c *campaign) configureEvents() {
	er := c.er
	for i, name := range c.w.order {
		s := c.w.servers[name]
		for j, n := 0, 2+er.IntN(2); j < n; j++ {
			spec := fmt.Sprintf("ev%d%c", i, 'a'+j)
			if j == 2 && er.IntN(2) == 0 {
				spec += ":poll"
			}
			s.addTopic(spec)
		}
		s.Retain = []int{4, 16, 64}[er.IntN(3)]
		s.Heartbeat = []time.Duration{10 * time.Second, 30 * time.Second, 30 * time.Second, 50 * time.Second}[er.IntN(4)]
		c.w.Tracef("config %s events=%s retain=%d heartbeat=%s", name, topicNames(s), s.Retain, s.Heartbeat)
	}
}

func topicNames(s *Server) string {
	out := ""
	for i, t := range s.topics {
		if i > 0 {
			out += ","
		}
		out += t.name
		if len(t.delivery) == 1 && t.delivery[0] == "poll" {
			out += ":poll"
		}
	}
	return out
}

// evTopicPick draws a server and one of its event types: mostly one the
// host has subscribed to, where emissions and faults matter.
func (c *campaign) evTopicPick() (*Server, *evTopic) {
	if subs := c.w.Host.subOrder; len(subs) > 0 && c.er.IntN(4) != 0 {
		hs := c.w.Host.subs[subs[c.er.IntN(len(subs))]]
		if s := c.w.servers[hs.server]; s != nil && s.topic(hs.name) != nil {
			return s, s.topic(hs.name)
		}
	}
	s := c.w.servers[c.w.order[c.er.IntN(len(c.w.order))]]
	return s, s.topics[c.er.IntN(len(s.topics))]
}

// eventsOp performs one random events step.
func (c *campaign) eventsOp() error {
	er, h := c.er, c.w.Host
	s, t := c.evTopicPick()
	switch k := er.IntN(100); {
	case k < 16:
		return c.evSubscribe(s, t)
	case k < 20:
		ids := h.subOrder
		if len(ids) == 0 || er.IntN(8) == 0 {
			return h.Unsubscribe(c.id("u"), "sub-unknown")
		}
		return h.Unsubscribe(c.id("u"), ids[er.IntN(len(ids))])
	case k < 23:
		return h.EventsList(c.id("el"), false)
	case k < 25:
		return h.Catalog(c.id("ec"), s.Name)
	case k < 50:
		n, size, crash := 1+er.IntN(4), 0, false
		switch er.IntN(40) {
		case 0:
			n = 300 // past the batch's 256 items: the rest is dropped and counted
		case 1:
			size = 30_000 // past the 24,000-character event: a preview
		case 2, 3:
			// The connection drops right behind the frames: mid-batch,
			// while the runtime's 500 ms window holds them.
			crash = len(s.liveConns()) > 0
		}
		c.w.Tracef("%s ! emits %d %s", s.Name, n, t.name)
		if err := s.emit(t.name, n, size); err != nil || !crash {
			return err
		}
		s.Crash("the server crashed mid-batch")
		return nil
	case k < 80:
		return c.evFault(s, t)
	case k < 90:
		return c.w.Advance(time.Duration(er.Int64N(int64(90 * time.Second))).Truncate(time.Millisecond))
	default:
		for i, n := 0, 1+er.IntN(20); i < n; i++ {
			c.w.quiet()
			if ran, err := c.w.step(true); err != nil || !ran {
				return err
			}
		}
		c.w.quiet()
		return nil
	}
}

// evSubscribe subscribes to t (or, now and then, to an event the server
// does not offer), with arguments, a cursor or maxAgeMs drawn.
func (c *campaign) evSubscribe(s *Server, t *evTopic) error {
	er := c.er
	name := t.name
	if er.IntN(15) == 0 {
		name = "nope"
	}
	args := []string{"", `{}`, `{"path":"a","deep":true}`, `{"deep":true,"path":"a"}`, `{"path":"b"}`}[er.IntN(5)]
	cursor, maxAge := "", -1
	if er.IntN(5) == 0 && t.seq > 0 {
		cursor = "c" + strconv.Itoa(er.IntN(t.seq+1))
	}
	if er.IntN(6) == 0 {
		maxAge = []int{0, 1000, 60_000}[er.IntN(3)]
	}
	return c.w.Host.Subscribe(c.id("e"), s.Name, name, args, cursor, maxAge)
}

// evFault has a server misbehave on the streams of one event type.
func (c *campaign) evFault(s *Server, t *evTopic) error {
	er := c.er
	what := ""
	switch k := er.IntN(100); {
	case k < 15:
		what = "heartbeat"
		s.evHeartbeat(t.name)
	case k < 27:
		what = "duplicates"
		s.evDup(t.name, 1+er.IntN(4))
	case k < 35:
		what = "gap"
		s.evGap(t.name, 1+er.IntN(5))
	case k < 45:
		what = "upstream error"
		s.evError(t.name, []string{"upstream poll failed", "upstream poll failed", "rate limited"}[er.IntN(3)])
	case k < 49:
		what = "terminate"
		s.evTerminate(t.name)
	case k < 57:
		what = "stall"
		s.evStall(t.name)
	case k < 70:
		kind := badFrames[er.IntN(len(badFrames))]
		what = "malformed " + kind
		if _, err := s.evBad(t.name, kind); err != nil {
			return err
		}
	case k < 80:
		how, code := "result", 0
		switch er.IntN(3) {
		case 1:
			how = "error" // no numeric code: interrupted, reconnects
		case 2:
			how, code = "error", -32012 // a numeric code: terminal
		}
		what = fmt.Sprintf("end %s code=%d", how, code)
		if _, err := s.evEnd(t.name, how, code); err != nil {
			return err
		}
	case k < 84:
		s.evFlap = 2 + er.IntN(9)
		what = fmt.Sprintf("flap %d", s.evFlap)
	case k < 88:
		spec := ""
		for _, x := range s.topics {
			if x != t || er.IntN(2) == 0 {
				spec += x.name + ":" + strings.Join(x.delivery, "+") + ","
			}
		}
		what = "catalog " + spec
		s.evCatalog(spec)
	default:
		what = "crash"
		s.Crash("killed by the events campaign")
	}
	c.w.Tracef("%s ! %s %s", s.Name, t.name, what)
	return nil
}

// evCheckpoint lets every episode play out with no new emission, then
// lists the subscriptions as the accounting checkpoint.
func (c *campaign) evCheckpoint() error {
	w := c.w
	c.w.Tracef("checkpoint")
	if err := w.Advance(5 * time.Minute); err != nil {
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
