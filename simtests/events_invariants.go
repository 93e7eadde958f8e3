package simtests

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// The events invariants:
//   - no event reaches the host twice for one subscription, no malformed
//     frame reaches it, and every event it gets was emitted by the server
//     under the subscription's name (and not lost in a gap);
//   - accounting, at each checkpoint (Campaign.evCheckpoint, the scenario
//     command ev-check): for each active subscription, every event its
//     server emitted after the subscription's first acknowledgement was
//     delivered, unless the server lost it (a gap, reported with
//     truncated), maxAgeMs skipped it, or it is counted in dropped_events
//     (the sum of what is missing never exceeds the sum of the counts); an
//     ended or failed subscription was reported so in a status wakeup
//     (unless statuses were dropped);
//   - wakeups are bounded by episodes: the status items of one
//     subscription never exceed two per events/stream its server received
//     for that event, plus one per gap and upstream error sent, plus two;
//   - the retry budget holds: between two valid events or heartbeats of
//     an event type, a server receives at most six events/stream requests
//     per subscription of that type (one open and five retries), however
//     often it acknowledges and then drops them;
//   - after Close returns nothing is delivered (checked by Host.Deliver).

// evKey names an event type of a server.
func evKey(server, name string) string { return server + "/" + name }

// subKey names a subscription's identity: an event type of a server and
// its arguments as canonical JSON (no arguments, null and {} are one).
// Subscriptions with different arguments keep separate retry budgets.
func subKey(server, name, args string) string {
	var v any
	if args != "" && json.Unmarshal([]byte(args), &v) == nil && v != nil {
		if b, err := json.Marshal(v); err == nil && string(b) != "{}" {
			return evKey(server, name) + " " + string(b)
		}
	}
	return evKey(server, name)
}

// evState is what the events invariants remember.
type evState struct {
	emitted   map[string]int             // evKey -> events emitted
	excused   map[string]map[int]bool    // evKey -> seqs lost or skipped on purpose (for some stream)
	phantom   map[string]map[int]bool    // evKey -> seqs lost before any stream got them
	delivered map[string]map[string]bool // subscription id -> event ids delivered
	statuses  map[string]int             // subscription id -> status items
	lastState map[string]string          // subscription id -> status of its last status item
	opens     map[string]int             // evKey -> events/stream requests received
	notices   map[string]int             // evKey -> gaps and upstream errors sent
	streak    map[string]int             // subKey -> opens since the last valid event or heartbeat
	peak      map[string]int             // subKey -> most subscriptions of it held at once in that streak
	abandoned map[string]int             // subKey -> subscribes cancelled while opening in that streak
	lastPort  map[string]time.Duration   // server -> when the port last delivered something of it
	lastHost  time.Duration              // when the host last subscribed or unsubscribed
	// The retry budget's lower bound: per subKey, the opens since the
	// last valid event or heartbeat (or since the subscribe, -1 then) and
	// when that was; per server, when a connect last failed or a request
	// was not sent (an attempt then costs no open).
	sinceAlive map[string]int
	aliveAt    map[string]time.Duration
	shaky      map[string]time.Duration
	dropped    int // dropped_events, summed
	droppedSt  int // dropped_statuses, summed
}

func (c *checker) ev() *evState {
	if c.evs == nil {
		c.evs = &evState{emitted: map[string]int{}, excused: map[string]map[int]bool{}, phantom: map[string]map[int]bool{}, delivered: map[string]map[string]bool{},
			statuses: map[string]int{}, lastState: map[string]string{}, opens: map[string]int{}, notices: map[string]int{},
			streak: map[string]int{}, peak: map[string]int{}, abandoned: map[string]int{}, lastPort: map[string]time.Duration{},
			sinceAlive: map[string]int{}, aliveAt: map[string]time.Duration{}, shaky: map[string]time.Duration{}}
	}
	return c.evs
}

func (c *checker) evEmitted(server, name string, seq int) { c.ev().emitted[evKey(server, name)] = seq }

// evExcused records that events (from, to] of a type will not reach a
// stream on purpose (lost in a gap, or older than maxAgeMs). The
// accounting excuses them for every subscription of the type: a looser
// check, never a false alarm.
func (c *checker) evExcused(server, name string, from, to int) {
	mark(c.ev().excused, evKey(server, name), from, to)
}

// evPhantom records that events (from, to] of a type were lost before
// the server sent them anywhere: none may ever be delivered.
func (c *checker) evPhantom(server, name string, from, to int) {
	c.evExcused(server, name, from, to)
	mark(c.ev().phantom, evKey(server, name), from, to)
}

func mark(m map[string]map[int]bool, k string, from, to int) {
	if m[k] == nil {
		m[k] = map[int]bool{}
	}
	for s := from + 1; s <= to; s++ {
		m[k][s] = true
	}
}

func (c *checker) evGapSent(server, name string)   { c.ev().notices[evKey(server, name)]++ }
func (c *checker) evErrorSent(server, name string) { c.ev().notices[evKey(server, name)]++ }

// evAlive is a valid event or heartbeat sent on a stream opened with
// args: the retry budget of that subscription resets.
func (c *checker) evAlive(server, name, args string) {
	k := subKey(server, name, args)
	c.ev().streak[k], c.ev().peak[k], c.ev().abandoned[k] = 0, 0, 0
	c.ev().sinceAlive[k], c.ev().aliveAt[k] = 0, c.w.Now()
}

// evAbandoned is the host cancelling a subscribe still opening: its open
// may still reach the server after a later subscribe of the same identity
// began (seed 40214: the events actor restarting delayed it), so it is
// allowed beside that subscription's six.
func (c *checker) evAbandoned(server, name, args string) {
	c.ev().abandoned[subKey(server, name, args)]++
}

// evShaky is a connect of server that failed (or was cancelled, or whose
// process exited at once, or that took longer than the 15 s activation
// timeout) or a request to it that was not sent: a subscription's attempt
// may then cost no events/stream at the server.
func (c *checker) evShaky(server string) { c.ev().shaky[server] = c.w.Now() + 1 }

// evExhausted checks the lower bound of the retry budget when a status
// wakeup says a subscription's reconnect attempts are exhausted: a valid
// event or heartbeat restored the whole budget, so the server received an
// events/stream for each of the five retries since the last one (or six
// since the subscribe), unless a connect failed or a request was not sent
// meanwhile (an attempt that reached no server).
func (c *checker) evExhausted(s eventstream.Snapshot) {
	e := c.ev()
	k := subKey(s.Server, s.Name, string(s.Arguments))
	at, ok := e.aliveAt[k]
	if !ok || e.shaky[s.Server] >= at || c.subscriptionsOf(k) > 1 {
		// (Two subscriptions of one identity share the server's opens and
		// signs of life: which one a sign of life was for is unknown.)
		return
	}
	if n := e.sinceAlive[k]; n < 5 {
		c.w.violate("subscription %s (%s) exhausted its reconnect attempts after %d events/stream since its last valid event or heartbeat (at %s): a sign of life restores all five retries",
			s.ID, k, n, at)
	}
}

// evSubscribing is a subscribe starting: the opens before it (of a
// subscribe that failed before its acknowledgement, say) are not the new
// subscription's.
func (c *checker) evSubscribing(server, name, args string) {
	c.ev().lastHost = c.w.Now()
	k := subKey(server, name, args)
	c.ev().streak[k], c.ev().peak[k] = 0, 0
	held := 0
	for _, hs := range c.w.Host.subs {
		if subKey(hs.server, hs.name, hs.args) == k {
			held++
		}
	}
	if held == 0 {
		// A new subscription: its first open and five retries. (A
		// subscribe that may reuse a held one changes nothing: seed
		// 16553; after a failed one the count only grows, looser.)
		c.ev().sinceAlive[k], c.ev().aliveAt[k] = -1, c.w.Now()
	}
}

// subscriptionsOf counts the subscriptions the host holds or is
// subscribing to with one identity (subKey): each may open six streams
// between two signs of life. (Two subscribes of one identity may both be
// opening before either is acknowledged.)
func (c *checker) subscriptionsOf(key string) int {
	n := 0
	for _, hs := range c.w.Host.subs {
		if subKey(hs.server, hs.name, hs.args) == key {
			n++
		}
	}
	for _, op := range c.w.Host.active {
		if op.kind == "esub" && subKey(op.server, op.evName, op.evArgs) == key {
			n++
		}
	}
	return max(n, 1)
}

// evOpen is a server receiving events/stream for name with args.
func (c *checker) evOpen(server, name, args string) {
	e := c.ev()
	e.opens[evKey(server, name)]++
	k := subKey(server, name, args)
	e.streak[k]++
	e.sinceAlive[k]++
	// A subscription that failed before its acknowledgement is no longer
	// held, but its opens stay in the streak: the allowance is for the
	// most subscriptions held at once since the streak began.
	e.peak[k] = max(e.peak[k], c.subscriptionsOf(k))
	if limit := 6*e.peak[k] + e.abandoned[k]; e.streak[k] > limit {
		c.w.violate("%s received %d events/stream requests without a valid event or heartbeat in between (at most %d: one open and five retries per subscribe)",
			k, e.streak[k], limit)
	}
}

func (c *checker) evUnsubscribing(string) { c.ev().lastHost = c.w.Now() }

// portDelivered is the port handing the runtime something of server.
func (c *checker) portDelivered(server string) { c.ev().lastPort[server] = c.w.Now() }

// settleTime is how long after its last port delivery (or the host's
// last subscribe or unsubscribe) a subscription's wakeups have surely
// flushed: one batch window and then some.
const settleTime = 600 * time.Millisecond

// settled reports whether server's subscriptions can be accounted now.
func (c *checker) settled(server string) bool {
	e := c.ev()
	now := c.w.Now()
	return now-e.lastPort[server] >= settleTime && now-e.lastHost >= settleTime
}

// evDelivered checks an events wakeup.
func (c *checker) evDelivered(d eventstream.EventsDetails) {
	e := c.ev()
	e.dropped += d.DroppedEvents
	evTotals.dropped.Add(int64(d.DroppedEvents))
	evTotals.delivered.Add(int64(len(d.Events)))
	for _, it := range d.Events {
		sub, id := it.SubscriptionID, it.Event.EventID
		if e.delivered[sub] == nil {
			e.delivered[sub] = map[string]bool{}
		}
		if e.delivered[sub][id] {
			c.w.violate("event %s delivered twice to subscription %s", id, sub)
		}
		e.delivered[sub][id] = true
		k := evKey(it.Server, it.Event.Name)
		seq, err := strconv.Atoi(strings.TrimPrefix(id, "e"))
		switch {
		case !strings.HasPrefix(id, "e") || err != nil:
			c.w.violate("subscription %s got event %q, which the server never emitted (a malformed frame?)", sub, id)
		case seq > e.emitted[k]:
			c.w.violate("subscription %s got event %s of %s, which has emitted only %d", sub, id, k, e.emitted[k])
		case e.phantom[k][seq]:
			c.w.violate("subscription %s got event %s of %s, which the server lost and never sent", sub, id, k)
		}
		if hs := c.w.Host.subs[sub]; hs != nil && (hs.name != it.Event.Name || hs.server != it.Server) {
			c.w.violate("subscription %s (%s/%s) got an event of %s", sub, hs.server, hs.name, k)
		}
	}
}

// evStatus checks a status wakeup.
func (c *checker) evStatus(d eventstream.StatusDetails) {
	e := c.ev()
	e.droppedSt += d.DroppedStatuses
	evTotals.statusItems.Add(int64(len(d.Subscriptions)))
	for _, s := range d.Subscriptions {
		e.statuses[s.ID]++
		e.lastState[s.ID] = string(s.Status)
		if s.Status == eventstream.StateFailed && strings.Contains(s.Error, "exhausted") {
			c.evExhausted(s)
		}
		k := evKey(s.Server, s.Name)
		// (+1 per injected subscription crash: its status wakeup says so.)
		if limit := 2*e.opens[k] + e.notices[k] + 2 + c.w.crashesFired(messages.ActorSubscription); e.statuses[s.ID] > limit {
			c.w.violate("subscription %s woke the host with %d status items; its episodes allow at most %d (%d opens, %d gaps and errors)",
				s.ID, e.statuses[s.ID], limit, e.opens[k], e.notices[k])
		}
	}
}

// evTotals counts, over the whole test binary, what the events
// invariants saw: TestSim reports it, so a campaign that stops exercising
// events shows.
var evTotals struct {
	subscriptions, delivered, statusItems, accounted, dropped atomic.Int64
}

// evAccount is the accounting checkpoint: subs is the runtime's list of
// subscriptions, taken with nothing in flight and every batch flushed.
func (c *checker) evAccount(subs []eventstream.Snapshot) {
	e := c.ev()
	missing := 0
	var where []string
	for _, s := range subs {
		hs := c.w.Host.subs[s.ID]
		if hs == nil || !c.settled(s.Server) {
			continue
		}
		k := evKey(s.Server, s.Name)
		switch s.Status {
		case eventstream.StateActive:
			evTotals.accounted.Add(1)
			n := 0
			for seq := hs.start + 1; seq <= e.emitted[k]; seq++ {
				if !e.excused[k][seq] && !e.delivered[s.ID]["e"+strconv.Itoa(seq)] {
					n++
				}
			}
			if n > 0 {
				missing += n
				where = append(where, s.ID+":"+strconv.Itoa(n))
			}
		case eventstream.StateEnded, eventstream.StateFailed:
			if e.lastState[s.ID] != string(s.Status) && e.droppedSt == 0 {
				c.w.violate("subscription %s is %s, but no status wakeup said so (last said %q)", s.ID, s.Status, e.lastState[s.ID])
			}
		}
	}
	c.evHeld(subs)
	if missing > e.dropped {
		c.w.violate("%d event(s) emitted after subscribing were neither delivered nor counted in dropped_events (%d counted) [%s]",
			missing, e.dropped, strings.Join(where, " "))
	}
}

// Keys an events wakeup's items and their events may carry: the event's
// own fields, never a frame's extra fields or its _meta.
var (
	itemKeys  = map[string]bool{"subscription_id": true, "server": true, "event": true, "replay_truncated": true}
	eventKeys = map[string]bool{"eventId": true, "name": true, "timestamp": true, "cursor": true, "data": true}
)

// evWakeKeys checks the JSON an events wakeup shows the model: every item
// and its event carry only their own fields (the simulated server sends
// every event with an extra field and the _meta that routes it).
func (c *checker) evWakeKeys(text string) {
	_, body, _ := strings.Cut(text, "\n")
	var w struct {
		Events []map[string]json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal([]byte(body), &w); err != nil {
		c.w.violate("an events wakeup's body is not JSON: %v", err)
		return
	}
	for _, it := range w.Events {
		for k := range it {
			if !itemKeys[k] {
				c.w.violate("an events wakeup's item carries %q", k)
			}
		}
		var ev map[string]json.RawMessage
		if json.Unmarshal(it["event"], &ev) != nil {
			c.w.violate("an events wakeup's item has no event object")
			continue
		}
		for k := range ev {
			if !eventKeys[k] {
				c.w.violate("an events wakeup's event carries %q", k)
			}
		}
	}
}

// evHeld checks, at a checkpoint, that every events stream a settled
// server still holds belongs to a live subscription: a stream that ended
// for the runtime (terminated, ended, failed, unsubscribed, replaced by a
// reopen) was cancelled at the server. Each live subscription has at most
// one stream open.
func (c *checker) evHeld(subs []eventstream.Snapshot) {
	live := map[string]int{}
	for _, s := range subs {
		if s.Status.Live() {
			live[subKey(s.Server, s.Name, string(s.Arguments))]++
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.w.servers)) {
		if !c.settled(name) {
			continue
		}
		held := map[string]int{}
		for _, conn := range c.w.servers[name].liveConns() {
			for _, st := range conn.streams {
				if st.ev == nil || conn.routes[st.subID] == nil {
					continue
				}
				k := subKey(name, st.ev.name, st.ev.args)
				if held[k]++; held[k] > live[k] {
					c.w.violate("%s holds %d events/stream stream(s) of %s (the latest %s) for %d live subscription(s): a stream the runtime ended was not cancelled at the server",
						name, held[k], k, st.subID, live[k])
				}
			}
		}
	}
}
