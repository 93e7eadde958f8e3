package simtests

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// The simulated events server: the wire format of events-protocol.md (a)
// at the connection port. A server offers event types (Server.Events);
// events/list answers its catalog, events/stream is a stream whose server
// side (evStream) acknowledges with notifications/events/active, replays
// from the cursor what it retains, then sends every event of its type the
// scenario or the campaign emits, and a heartbeat every Server.Heartbeat.
// Cursors are "c<seq>": the sequence number of the last event of the type
// the stream has passed. A type retains its last Server.Retain events; a
// cursor older than that gets a second active with truncated:true (as
// figma-listen does) and the events in between are lost.

const (
	noteActive     = "notifications/events/active"
	noteEvent      = "notifications/events/event"
	noteHeartbeat  = "notifications/events/heartbeat"
	noteError      = "notifications/events/error"
	noteTerminated = "notifications/events/terminated"

	defaultRetain    = 32
	defaultHeartbeat = 30 * time.Second
)

// evTopic is one event type a simulated server offers.
type evTopic struct {
	name     string
	delivery []string // the delivery modes of its catalog entry
	listed   bool     // in the catalog (an unlisted type is refused at open)
	seq      int      // events emitted so far
	log      []evRecord
}

// evRecord is one retained event.
type evRecord struct {
	seq  int
	at   time.Duration
	data json.RawMessage
}

// evStream is the server side of one events/stream.
type evStream struct {
	name   string
	args   string // the request's arguments, as sent
	cursor *string
	maxAge *int64
	acked  bool
	pos    int  // the last sequence number the stream has passed
	muted  bool // stalled or terminated: sends nothing more
	hb     clock.Timer
}

// topic returns the server's event type called name, or nil.
func (s *Server) topic(name string) *evTopic {
	for _, t := range s.topics {
		if t.name == name {
			return t
		}
	}
	return nil
}

// addTopic offers an event type ("name" or "name:poll+webhook").
func (s *Server) addTopic(spec string) {
	name, modes, _ := strings.Cut(spec, ":")
	t := &evTopic{name: name, delivery: []string{"push"}, listed: true}
	if modes != "" {
		t.delivery = strings.Split(modes, "+")
	}
	s.topics = append(s.topics, t)
}

func (s *Server) retain() int {
	if s.Retain > 0 {
		return s.Retain
	}
	return defaultRetain
}

// eventsList answers events/list (one page).
func (s *Server) eventsList() (json.RawMessage, *messages.Error) {
	events := []map[string]any{}
	for _, t := range s.topics {
		if t.listed {
			events = append(events, map[string]any{"name": t.name, "description": "simulated " + t.name,
				"delivery": t.delivery, "inputSchema": map[string]any{"type": "object"}})
		}
	}
	raw, _ := json.Marshal(map[string]any{"events": events})
	return raw, nil
}

// evStreams returns the events streams of type name the server is serving
// on its live connections (acknowledged ones only when acked is set), in
// connection and opening order.
func (s *Server) evStreams(name string, acked bool) []*simStream {
	var out []*simStream
	for _, c := range s.liveConns() {
		for _, st := range c.streams {
			if st.ev != nil && st.ev.name == name && !st.ev.muted && c.routes[st.subID] != nil && (st.ev.acked || !acked) {
				out = append(out, st)
			}
		}
	}
	return out
}

// openEvents reads an events/stream request's params.
func (st *simStream) openEvents() {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Cursor    *string         `json:"cursor"`
		MaxAgeMs  *int64          `json:"maxAgeMs"`
	}
	_ = json.Unmarshal(st.op.Params, &p)
	st.ev = &evStream{name: p.Name, args: string(p.Arguments), cursor: p.Cursor, maxAge: p.MaxAgeMs}
	st.host = "ev:" + p.Name
	st.c.l.srv.w.inv.evOpen(st.c.l.srv.Name, p.Name, st.ev.args)
}

// startEvents is the server accepting an events/stream: refuse an
// unknown type, else acknowledge, replay and begin heartbeats.
func (st *simStream) startEvents() {
	c, ev := st.c, st.ev
	s := c.l.srv
	t := s.topic(ev.name)
	if t == nil || !t.listed {
		st.refuse(-32011, "unknown event "+strconv.Quote(ev.name))
		return
	}
	from, lost := t.seq, 0
	if ev.cursor != nil {
		k, err := strconv.Atoi(strings.TrimPrefix(*ev.cursor, "c"))
		if err != nil || !strings.HasPrefix(*ev.cursor, "c") || k < 0 {
			st.refuse(-32602, "invalid cursor")
			return
		}
		from = min(k, t.seq)
	}
	if ev.maxAge != nil {
		// Replay from the later of the cursor and now - maxAge: what is
		// older is skipped on purpose.
		floor := t.seq
		for _, e := range t.log {
			if e.at >= c.l.w.Now()-time.Duration(*ev.maxAge)*time.Millisecond {
				floor = e.seq - 1
				break
			}
		}
		if ev.cursor == nil || floor > from {
			s.w.inv.evExcused(s.Name, ev.name, from, floor)
			from = floor
		}
	}
	oldest := t.seq + 1
	if len(t.log) > 0 {
		oldest = t.log[0].seq
	}
	ack := "c" + strconv.Itoa(from)
	if ev.cursor != nil {
		ack = *ev.cursor // the client's own cursor first, as figma-listen does
	}
	ev.acked, ev.pos = true, from
	st.sendEvFrame(noteActive, map[string]any{"cursor": ack}, "active "+ack)
	if s.evFlap > 0 {
		// Acknowledge, then drop: only events and heartbeats may give a
		// subscription its retries back.
		s.evFlap--
		if s.evFlapGap {
			st.gap("flapping")
		}
		c.answer(c.pending[st.op.ID], nil, &messages.Error{Kind: messages.KindRPC, Server: s.Name, Message: "stream dropped after the acknowledgement"})
		return
	}
	if from < oldest-1 {
		lost = oldest - 1 - from
		s.w.inv.evExcused(s.Name, ev.name, from, oldest-1)
		ev.pos = oldest - 1
		st.gap(fmt.Sprintf("lost %d", lost))
	}
	st.replay(ev.pos)
	st.heartbeats()
}

// refuse answers the stream with a JSON-RPC error with a numeric code.
func (st *simStream) refuse(code int, msg string) {
	c := st.c
	r := c.pending[st.op.ID]
	if r == nil || r.stream != st {
		return
	}
	c.answer(r, nil, &messages.Error{Kind: messages.KindRPC, Server: c.l.srv.Name, RPCCode: code,
		Message: fmt.Sprintf("%s (JSON-RPC error %d)", msg, code)})
}

// gap sends a fresh active with truncated:true at the stream's position.
func (st *simStream) gap(why string) {
	cur := "c" + strconv.Itoa(st.ev.pos)
	st.c.l.srv.w.inv.evGapSent(st.c.l.srv.Name, st.ev.name)
	st.sendEvFrame(noteActive, map[string]any{"cursor": cur, "truncated": true}, "active "+cur+" truncated ("+why+")")
}

// replay sends the retained events after seq.
func (st *simStream) replay(after int) {
	t := st.c.l.srv.topic(st.ev.name)
	for _, e := range t.log {
		if e.seq > after {
			st.sendEvent(e, "")
		}
	}
}

// heartbeats arms the stream's next heartbeat.
func (st *simStream) heartbeats() {
	every := st.c.l.srv.Heartbeat
	if every == 0 {
		every = defaultHeartbeat
	}
	if every < 0 {
		return
	}
	st.ev.hb = st.c.l.w.Clock.AfterFunc(every, func() {
		if st.servingEvents() {
			st.heartbeat()
			st.heartbeats()
		}
	})
}

// servingEvents reports whether the server still serves the stream.
func (st *simStream) servingEvents() bool {
	return st.ev != nil && !st.ev.muted && st.c.state == connLive && st.c.routes[st.subID] != nil
}

// heartbeat sends a heartbeat with the stream's cursor.
func (st *simStream) heartbeat() {
	cur := "c" + strconv.Itoa(st.ev.pos)
	st.c.l.srv.w.inv.evAlive(st.c.l.srv.Name, st.ev.name, st.ev.args)
	st.sendEvFrame(noteHeartbeat, map[string]any{"cursor": cur}, "heartbeat "+cur)
}

// evHeartbeatWithout sends, on every acknowledged stream of name, a
// heartbeat whose cursor is null (how "null") or absent: the
// subscription's cursor becomes null (events-protocol.md (e) routing 6).
func (s *Server) evHeartbeatWithout(name, how string) int {
	sts := s.evStreams(name, true)
	for _, st := range sts {
		p := map[string]any{}
		if how == "null" {
			p["cursor"] = nil
		}
		st.c.l.srv.w.inv.evAlive(s.Name, st.ev.name, st.ev.args)
		st.sendEvFrame(noteHeartbeat, p, "heartbeat cursor="+how)
	}
	return len(sts)
}

// evHeartbeat sends a heartbeat on every acknowledged stream of name.
func (s *Server) evHeartbeat(name string) int {
	sts := s.evStreams(name, true)
	for _, st := range sts {
		st.heartbeat()
	}
	return len(sts)
}

// sendEvent sends one event; what marks duplicates and faults.
func (st *simStream) sendEvent(e evRecord, what string) {
	st.ev.pos = max(st.ev.pos, e.seq)
	st.c.l.srv.w.inv.evAlive(st.c.l.srv.Name, st.ev.name, st.ev.args)
	id := "e" + strconv.Itoa(e.seq)
	p := map[string]any{"eventId": id, "name": st.ev.name, "timestamp": clock.Epoch.Add(e.at).UTC().Format(time.RFC3339Nano),
		"data": e.data, "cursor": "c" + strconv.Itoa(e.seq),
		"source": "sim"} // a field of no meaning to the client: never delivered (invariant 16)
	line := "event " + id
	if what != "" {
		line += " " + what
	}
	st.sendEvFrame(noteEvent, p, line)
}

// sendEvFrame sends a frame of the stream with its subscription id.
func (st *simStream) sendEvFrame(method string, p map[string]any, what string) {
	p["_meta"] = map[string]string{messages.SubscriptionIDKey: st.subID}
	raw, _ := json.Marshal(p)
	st.c.serverNotify(method, raw, what)
}

// stopEvents ends the stream's heartbeats.
func (st *simStream) stopEvents() {
	if st.ev != nil && st.ev.hb != nil {
		st.ev.hb.Stop()
		st.ev.hb = nil
	}
}

// emit has the server emit n events of type name, each sent on every
// acknowledged stream of that type; size is the data's length in bytes.
func (s *Server) emit(name string, n, size int) error {
	t := s.topic(name)
	if t == nil {
		return fmt.Errorf("%s offers no event %q", s.Name, name)
	}
	for range n {
		t.seq++
		data := json.RawMessage(fmt.Sprintf(`{"seq":%d}`, t.seq))
		if size > 0 {
			data, _ = json.Marshal(map[string]any{"seq": t.seq, "blob": strings.Repeat("x", size)})
		}
		e := evRecord{seq: t.seq, at: s.w.Now(), data: data}
		t.log = append(t.log, e)
		if len(t.log) > s.retain() {
			t.log = t.log[len(t.log)-s.retain():]
		}
		s.w.inv.evEmitted(s.Name, name, t.seq)
		for _, st := range s.evStreams(name, true) {
			st.sendEvent(e, "")
		}
	}
	return nil
}
