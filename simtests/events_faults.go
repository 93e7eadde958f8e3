package simtests

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcprt/mcprt/messages"
)

// The events server's misbehaviour, on every acknowledged stream of one
// event type of one server: duplicates, gaps, upstream errors,
// terminations, stalls, malformed frames and stream ends. Scenario
// commands (commands_events.go) and the campaign (campaign_events.go)
// both call these.

// evDup resends the last n retained events (duplicates the client must
// not deliver twice).
func (s *Server) evDup(name string, n int) int {
	t := s.topic(name)
	sts := s.evStreams(name, true)
	if t == nil || len(sts) == 0 {
		return 0
	}
	from := max(0, len(t.log)-n)
	for _, st := range sts {
		for _, e := range t.log[from:] {
			if e.seq <= st.ev.pos {
				st.sendEvent(e, "(duplicate)")
			}
		}
	}
	return len(sts)
}

// evGap has the server lose n events of name (emitted, never sent, gone
// from its log), then tell each stream with a fresh active, truncated.
func (s *Server) evGap(name string, n int) int {
	t := s.topic(name)
	if t == nil || n <= 0 {
		return 0
	}
	sts := s.evStreams(name, true)
	s.w.inv.evPhantom(s.Name, name, t.seq, t.seq+n)
	t.seq += n
	t.log = nil
	for _, st := range sts {
		st.ev.pos = t.seq
		st.gap(fmt.Sprintf("lost %d", n))
	}
	return len(sts)
}

// evError sends notifications/events/error (recoverable) with msg.
func (s *Server) evError(name, msg string) int {
	sts := s.evStreams(name, true)
	for _, st := range sts {
		s.w.inv.evErrorSent(s.Name, name)
		st.sendEvFrame(noteError, map[string]any{"error": map[string]any{"code": -32603, "message": msg, "data": map[string]string{"reason": "upstream_error"}}},
			"error "+strconv.Quote(msg))
	}
	return len(sts)
}

// evTerminate sends notifications/events/terminated; the server then
// sends nothing more on the stream.
func (s *Server) evTerminate(name string) int {
	sts := s.evStreams(name, true)
	for _, st := range sts {
		st.sendEvFrame(noteTerminated, map[string]any{"error": map[string]any{"code": -32012, "message": "subscription revoked"}}, "terminated -32012")
		st.ev.muted = true
		st.stopEvents()
	}
	return len(sts)
}

// evStall makes the streams of name silent (no events, no heartbeats)
// while they stay open: the client's watchdog must notice.
func (s *Server) evStall(name string) int {
	sts := s.evStreams(name, true)
	for _, st := range sts {
		s.w.Tracef("%s ! %d stalls", st.c.l.label, st.op.ID)
		st.ev.muted = true
		st.stopEvents()
	}
	return len(sts)
}

// badFrames are the malformed event frames the server can send; none may
// be delivered, reset the watchdog or move the cursor.
var badFrames = []string{"noid", "numid", "longid", "name", "nodata", "notime", "longtime", "array", "nometa"}

// evBad sends one malformed event frame of the given kind.
func (s *Server) evBad(name, kind string) (int, error) {
	sts := s.evStreams(name, true)
	for _, st := range sts {
		p := map[string]any{"eventId": "bad-" + kind, "name": name, "timestamp": "2026-01-01T00:00:00Z", "data": map[string]string{"bad": kind}, "cursor": "c999999"}
		switch kind {
		case "noid":
			delete(p, "eventId")
		case "numid":
			p["eventId"] = 7
		case "longid":
			p["eventId"] = strings.Repeat("i", 1025)
		case "name":
			p["name"] = name + "-other"
		case "nodata":
			delete(p, "data")
		case "notime":
			delete(p, "timestamp")
		case "longtime":
			p["timestamp"] = strings.Repeat("t", 81)
		case "array":
			st.c.serverNotify(noteEvent, []byte(`[1,2,3]`), "malformed array")
			continue
		case "nometa":
			// Without its subscription id: not routed to the stream.
			st.c.serverNotify(noteEvent, []byte(`{"eventId":"bad-nometa","name":"`+name+`","timestamp":"t","data":1}`), "event without _meta")
			continue
		default:
			return 0, fmt.Errorf("unknown bad frame %q (one of %s)", kind, strings.Join(badFrames, ", "))
		}
		st.sendEvFrame(noteEvent, p, "malformed "+kind)
	}
	return len(sts), nil
}

// evEnd ends the streams of name: with a result, or a JSON-RPC error
// (code 0: an error object without a numeric code).
func (s *Server) evEnd(name, how string, code int) (int, error) {
	var sts []*simStream
	for _, st := range s.evStreams(name, false) {
		if r := st.c.pending[st.op.ID]; r != nil && r.stream == st {
			sts = append(sts, st)
		}
	}
	for _, st := range sts {
		c := st.c
		r := c.pending[st.op.ID]
		switch how {
		case "result":
			c.answer(r, []byte(`{}`), nil)
		case "error":
			e := &messages.Error{Kind: messages.KindRPC, Server: s.Name, RPCCode: code, Message: fmt.Sprintf("stream failed (JSON-RPC error %d)", code)}
			if code == 0 {
				e.Message = "stream failed"
			}
			c.answer(r, nil, e)
		default:
			return 0, fmt.Errorf("end how %q: result or error", how)
		}
	}
	return len(sts), nil
}

// evCatalog sets which of the server's event types its catalog lists
// (and with which delivery modes): "a,b:poll". Types not named are
// unlisted, and an unlisted type's stream is refused.
func (s *Server) evCatalog(spec string) {
	for _, t := range s.topics {
		t.listed = false
	}
	for _, item := range strings.Split(spec, ",") {
		if item == "" {
			continue
		}
		name, modes, _ := strings.Cut(item, ":")
		t := s.topic(name)
		if t == nil {
			s.addTopic(item)
			continue
		}
		t.listed, t.delivery = true, []string{"push"}
		if modes != "" {
			t.delivery = strings.Split(modes, "+")
		}
	}
}

// evLate sends an event on the newest stream of name the runtime has
// cancelled or that has ended: the server had not heard yet. It is a late
// frame, dropped and counted.
func (s *Server) evLate(name string) int {
	for _, c := range slices.Backward(s.liveConns()) {
		for _, st := range slices.Backward(c.streams) {
			if st.ev != nil && st.ev.name == name && c.routes[st.subID] == nil {
				st.sendEvFrame(noteEvent, map[string]any{"eventId": "late", "name": name, "timestamp": "t", "data": 1}, "late event")
				return 1
			}
		}
	}
	return 0
}
