package simtests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// Streams at the simulated port. A stream request (messages.Op with Stream
// set) gets a route before it is "written", keyed by its subscription id
// (the connection's id prefix, "-", the op id, as the real transports
// make it); the server then sends notifications carrying that id in
// params._meta, and the simulated port routes each one the way
// transports/router.go does: a declared method with a live stream's id goes
// to that stream's sink (StreamNotification, once it has a credit); a
// method some stream of the connection declared, with our prefix and no
// live stream, is a late frame (LateFrame, counted by the runtime);
// notifications/cancelled for a live stream ends it (OpResult with
// ServerCancelled); everything else is an ordinary ConnNotification.

// The simulated protocol: requests sim/echo (answered with the params) and
// any other sim/* method (method not found), streams sim/items.
const (
	methodItem    = "notifications/sim/item"    // a stream's frame
	methodOther   = "notifications/sim/other"   // declared, used off streams
	methodChanged = "notifications/sim/changed" // for observers
)

// route is one live stream at a simulated connection.
type route struct {
	st      *simStream
	methods map[string]bool
	sink    messages.Sink
	credits *messages.Credits
}

// simStream is a stream request as the server sees it: the frames it
// sends and how it will end. It outlives its route: a server that has not
// yet heard of the end may still send frames (late frames).
type simStream struct {
	c     *simConn
	op    messages.Op
	subID string
	host  string // the host's id for the stream (params "stream")
	seq   int    // frames sent so far (every frame the server sends has the next)
	plan  streamPlan
	timer clock.Timer // the next frame of the plan
	over  bool        // the server sends nothing more by its plan
	ev    *evStream   // an events/stream's server side (events_server.go)
}

// streamPlan is how a stream behaves, from its params or the seed.
type streamPlan struct {
	every time.Duration // between frames; 0: frames only on command
	n     int           // frames before the end; 0: no end by itself
	end   string        // result, error, cancelled, none
	code  int           // error: JSON-RPC code (0: none)
	data  json.RawMessage
	other int // every other-th frame has an undeclared method (0: never)
	late  int // frames still sent after the stream ended
}

func (p streamPlan) String() string {
	if p.every == 0 && p.n == 0 && p.late == 0 && p.other == 0 {
		return "on command"
	}
	s := fmt.Sprintf("every=%s n=%d end=%s", p.every, p.n, p.end)
	if p.end == "error" {
		s += fmt.Sprintf(" code=%d", p.code)
	}
	if p.other > 0 {
		s += fmt.Sprintf(" other=%d", p.other)
	}
	if p.late > 0 {
		s += fmt.Sprintf(" late=%d", p.late)
	}
	return s
}

// streamParams is what a stream request's params may ask for.
type streamParams struct {
	Stream string          `json:"stream"`
	Every  string          `json:"every"`
	N      int             `json:"n"`
	End    string          `json:"end"`
	Code   int             `json:"code"`
	Data   json.RawMessage `json:"data"`
	Other  int             `json:"other"`
	Late   int             `json:"late"`
}

// subID is the subscription id of op on c, as the real transports make it.
func (c *simConn) subID(id messages.OpID) string {
	return c.l.prefix + "-" + strconv.FormatUint(uint64(id), 10)
}

// openStream registers op's route and reports it sent; the server starts
// once its plan's latency has passed (act).
func (c *simConn) openStream(op messages.Op, r *request) {
	var p streamParams
	_ = json.Unmarshal(op.Params, &p)
	st := &simStream{c: c, op: op, subID: c.subID(op.ID), host: p.Stream}
	st.plan = c.l.srv.planStream(p)
	if op.Method == "events/stream" {
		st.openEvents()
	}
	r.stream = st
	methods := map[string]bool{}
	for _, m := range op.Stream.Methods {
		methods[m] = true
		c.declared[m] = true
	}
	c.routes[st.subID] = &route{st: st, methods: methods, sink: op.Stream.Sink, credits: op.Stream.Credits}
	l := c.l
	l.push(delivery{msg: messages.StreamSent{Server: l.srv.Name, Gen: l.gen, ID: op.ID}, line: fmt.Sprintf("%d sent", op.ID), sink: op.Stream.Sink})
	if st.plan.String() != "on command" {
		l.w.Tracef("%s ! %d stream %s %s", l.label, op.ID, st.host, st.plan)
	}
}

// start is the server accepting the stream: frames follow by its plan.
func (st *simStream) start() {
	if st.ev != nil {
		st.startEvents()
		return
	}
	if st.plan.every > 0 {
		st.schedule()
	} else if st.plan.n == 0 && st.plan.end != "none" && st.plan.end != "" {
		st.finish() // ends at once
	}
}

func (st *simStream) schedule() {
	st.timer = st.c.l.w.Clock.AfterFunc(st.plan.every, st.tick)
}

// tick sends the plan's next frame, and ends the stream after the last.
func (st *simStream) tick() {
	st.timer = nil
	if st.over || st.c.state != connLive {
		return
	}
	method := methodItem
	if st.plan.other > 0 && (st.seq+1)%st.plan.other == 0 {
		method = "notifications/message" // declared by nobody: normal handling
	}
	st.send(method, "")
	if st.plan.n > 0 && st.seq >= st.plan.n && st.plan.end != "none" {
		st.finish()
		return
	}
	st.schedule()
}

// send has the server send one frame of the stream. sub is "" for the
// stream's own id, "none" for no id, anything else for that id.
func (st *simStream) send(method, sub string) {
	st.seq++
	meta := map[string]string{messages.SubscriptionIDKey: st.subID}
	switch sub {
	case "":
	case "none":
		meta = nil
	default:
		meta[messages.SubscriptionIDKey] = sub
	}
	params := map[string]any{"stream": st.host, "seq": st.seq}
	if meta != nil {
		params["_meta"] = meta
	}
	raw, _ := json.Marshal(params)
	st.c.serverNotify(method, raw, fmt.Sprintf("%s seq=%d", st.host, st.seq))
}

// finish is the server ending the stream by its plan, then sending its
// late frames, if any.
func (st *simStream) finish() {
	c := st.c
	r := c.pending[st.op.ID]
	if r == nil || r.stream != st {
		return
	}
	switch st.plan.end {
	case "cancelled":
		raw, _ := json.Marshal(map[string]any{"requestId": st.subID, "reason": "the server ended the stream"})
		c.serverNotify("notifications/cancelled", raw, st.host)
	case "error":
		e := &messages.Error{Kind: messages.KindRPC, Server: c.l.srv.Name, RPCCode: st.plan.code, RPCData: st.plan.data,
			Message: fmt.Sprintf("stream failed (JSON-RPC error %d)", st.plan.code)}
		if st.plan.code == 0 {
			e.Message = "stream failed"
		}
		c.answer(r, nil, e)
	default:
		res, _ := json.Marshal(map[string]any{"stream": st.host, "frames": st.seq})
		c.answer(r, res, nil)
	}
	st.sendLate()
}

// sendLate sends the plan's late frames: the server has not yet heard
// that the stream is over.
func (st *simStream) sendLate() {
	for i := 0; i < st.plan.late && st.c.state == connLive; i++ {
		st.send(methodItem, "")
	}
}

// stop makes the server send nothing more by the stream's plan.
func (st *simStream) stop() {
	st.stopEvents()
	st.over = true
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
}

// serverNotify is the server sending a notification on c, routed as
// transports/router.go routes it. what names it in the trace.
func (c *simConn) serverNotify(method string, params json.RawMessage, what string) {
	l := c.l
	if method == "notifications/cancelled" {
		var p struct {
			RequestID string `json:"requestId"`
		}
		_ = json.Unmarshal(params, &p)
		if rt := c.routes[p.RequestID]; rt != nil {
			st := rt.st
			c.dropRoute(st)
			if r := c.pending[st.op.ID]; r != nil {
				c.forget(r)
			}
			l.push(delivery{msg: messages.OpResult{Server: l.srv.Name, Gen: l.gen, ID: st.op.ID, ServerCancelled: true},
				line: fmt.Sprintf("%d server cancelled", st.op.ID), delivered: func() { l.w.inv.streamAnswered(st.host, nil) }})
			return
		}
		if strings.HasPrefix(p.RequestID, l.prefix+"-") {
			return // one of ours, already over: nothing to do
		}
		l.push(delivery{msg: messages.ConnNotification{Server: l.srv.Name, Gen: l.gen, Method: method, Params: params}, line: "notification " + method})
		return
	}
	id := subscriptionOf(params)
	if strings.HasPrefix(id, l.prefix+"-") {
		rt := c.routes[id]
		switch {
		case rt == nil && c.declared[method]:
			l.push(delivery{msg: messages.LateFrame{Server: l.srv.Name, Gen: l.gen}, line: "late " + method + " " + what,
				delivered: func() { l.w.inv.lateFrame(l.srv.Name) }})
			return
		case rt != nil && rt.methods[method]:
			st, seq := rt.st, rt.st.seq
			l.push(delivery{msg: messages.StreamNotification{Server: l.srv.Name, Gen: l.gen, ID: st.op.ID, Method: method, Params: params},
				line: fmt.Sprintf("%d %s %s", st.op.ID, method, what), sink: rt.sink, credits: rt.credits,
				delivered: func() { l.w.inv.frameRouted(st.host, seq) }})
			return
		}
	}
	line := "notification " + method
	if what != "" {
		line += " " + what
	}
	l.push(delivery{msg: messages.ConnNotification{Server: l.srv.Name, Gen: l.gen, Method: method, Params: params}, line: line})
}

// subscriptionOf reads params._meta's subscription id ("" when none).
func subscriptionOf(params json.RawMessage) string {
	if !bytes.Contains(params, []byte(messages.SubscriptionIDKey)) {
		return ""
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var id string
	if json.Unmarshal(p.Meta[messages.SubscriptionIDKey], &id) != nil {
		return ""
	}
	return id
}

// dropRoute ends a stream's route and the server's plan for it.
func (c *simConn) dropRoute(st *simStream) {
	delete(c.routes, st.subID)
	st.stop()
}

// streamFor returns the stream the host calls host on c, the newest if
// several, or nil.
func (c *simConn) streamFor(host string) *simStream {
	for i := len(c.streams) - 1; i >= 0; i-- {
		if c.streams[i].host == host {
			return c.streams[i]
		}
	}
	return nil
}

// notify has the server send method, outside any stream, on each of its
// live connections; params carry a count per server ("n").
func (s *Server) notify(method string) {
	s.notified++
	raw, _ := json.Marshal(map[string]int{"n": s.notified})
	for _, c := range s.liveConns() {
		c.serverNotify(method, raw, "n="+strconv.Itoa(s.notified))
	}
}
