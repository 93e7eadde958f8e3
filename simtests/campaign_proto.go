package simtests

import (
	"encoding/json"
	"fmt"
	"time"
)

// The campaign's protocol-extension steps: sessions, requests, streams
// that end every way (the server's result, its notifications/cancelled,
// a JSON-RPC error with or without code and data, the host's cancel, a
// failing or panicking handler, the session's close, dispose, a crash or a
// fresh connect, shutdown), observers, frames the server sends late or
// with other ids and methods, bursts past the stream window.

// protoOp performs one random protocol step.
func (c *campaign) protoOp() error {
	r, h := c.r, c.w.Host
	ps := h.proto()
	if ps.proto == nil {
		return h.Register()
	}
	sessions := ps.sessions
	if len(sessions) == 0 || r.IntN(100) < 15 {
		return h.Session(c.id("p"), c.server().Name)
	}
	hs := sessions[r.IntN(len(sessions))]
	var open []*hostSession
	for _, x := range sessions {
		if !x.done && !x.closing {
			open = append(open, x)
		}
	}
	switch {
	case len(open) > 0 && r.IntN(5) != 0:
		hs = open[r.IntN(len(open))] // mostly work on sessions that can still do some
	case len(open) == 0 && r.IntN(3) != 0:
		return h.Session(c.id("p"), c.server().Name)
	}
	switch k := r.IntN(100); {
	case k < 30:
		fail, panicAt := 0, 0
		if r.IntN(20) == 0 {
			fail = 1 + r.IntN(4)
		} else if r.IntN(30) == 0 {
			panicAt = 1 + r.IntN(4)
		}
		return h.OpenStream(c.id("x"), hs.id, c.streamParams(), fail, panicAt)
	case k < 38:
		methods := []string{methodChanged}
		if r.IntN(3) == 0 {
			methods = append(methods, methodOther)
		}
		fail := 0
		if r.IntN(15) == 0 {
			fail = 1 + r.IntN(3)
		}
		return h.Watch(c.id("w"), hs.id, methods, fail)
	case k < 50:
		method := "sim/echo"
		if r.IntN(10) == 0 {
			method = "sim/missing"
		}
		return h.Request(c.id("r"), hs.id, method, fmt.Sprintf(`{"n":%d}`, r.IntN(1000)))
	case k < 58:
		var open []*hostStream
		for _, x := range ps.streams {
			if !x.ended && !x.cancelled {
				open = append(open, x)
			}
		}
		if len(open) == 0 {
			return nil
		}
		return h.CancelStream(open[r.IntN(len(open))].id)
	case k < 70:
		return c.serverFrames()
	case k < 80:
		return c.serverEnds()
	case k < 87:
		s := c.server()
		s.notify(methodChanged)
		return nil
	case k < 93:
		if hs.closing {
			return nil
		}
		return h.CloseSession(c.id("q"), hs.id)
	case k < 95:
		return h.Dispose(c.id("d"))
	default:
		return c.serverFrames()
	}
}

// streamParams draws how the server will run a stream.
func (c *campaign) streamParams() string {
	r := c.r
	p := map[string]any{}
	if r.IntN(3) != 0 {
		p["every"] = (time.Duration(200+r.IntN(2800)) * time.Millisecond).String()
	}
	if r.IntN(2) == 0 {
		p["n"] = 1 + r.IntN(6)
	}
	switch r.IntN(5) {
	case 0:
		p["end"] = "result"
	case 1:
		p["end"] = "cancelled"
	case 2:
		p["end"] = "error"
		if r.IntN(3) != 0 {
			p["code"] = -32000 - r.IntN(100)
		}
		if r.IntN(2) == 0 {
			p["data"] = map[string]int{"detail": r.IntN(100)}
		}
	}
	if r.IntN(6) == 0 {
		p["other"] = 2 + r.IntN(3)
	}
	if r.IntN(5) == 0 {
		p["late"] = 1 + r.IntN(2)
	}
	raw, _ := json.Marshal(p)
	return string(raw)
}

// liveStreams returns the streams servers received on live connections,
// in order.
func (c *campaign) liveStreams() []*simStream {
	var out []*simStream
	for _, name := range c.w.order {
		for _, l := range c.w.servers[name].links {
			if l.conn != nil && l.conn.state == connLive {
				out = append(out, l.conn.streams...)
			}
		}
	}
	return out
}

// serverFrames has a server send frames of one of its streams, ended or
// not: its own, with a method nobody declared, without an id, with
// another client's id, or (rarely) a burst past the stream window.
func (c *campaign) serverFrames() error {
	sts := c.liveStreams()
	if len(sts) == 0 {
		return nil
	}
	st := sts[c.r.IntN(len(sts))]
	method, sub, n := methodItem, "", 1+c.r.IntN(3)
	switch c.r.IntN(12) {
	case 0:
		method = "notifications/message"
	case 1:
		method = methodOther
	case 2:
		sub = "none"
	case 3:
		sub = "other-client-7"
	case 4:
		if c.r.IntN(4) == 0 {
			n = 260 // past StreamWindow: the link waits for credits
		}
	}
	c.w.Tracef("%s ! %d sends %d frame(s) %s %s", st.c.l.label, st.op.ID, n, method, sub)
	for i := 0; i < n && st.c.state == connLive; i++ {
		st.send(method, sub)
	}
	return nil
}

// serverEnds has a server end one of its live streams, some way.
func (c *campaign) serverEnds() error {
	var live []*simStream
	for _, st := range c.liveStreams() {
		if r := st.c.pending[st.op.ID]; r != nil && r.stream == st {
			live = append(live, st)
		}
	}
	if len(live) == 0 {
		return nil
	}
	st := live[c.r.IntN(len(live))]
	st.plan.end = []string{"result", "cancelled", "error"}[c.r.IntN(3)]
	st.plan.code, st.plan.data = 0, nil
	if st.plan.end == "error" && c.r.IntN(2) == 0 {
		st.plan.code = -32012
		st.plan.data = json.RawMessage(`{"reason":"terminated"}`)
	}
	c.w.Tracef("%s ! %d ends: %s", st.c.l.label, st.op.ID, st.plan.end)
	st.finish()
	return nil
}
