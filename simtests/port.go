package simtests

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// link is one dial generation's ordered way back into the runtime. The
// port contract orders everything a connection reports (its DialResult
// first, its ConnClosed last), so every outcome of a generation is pushed
// onto one outbox and delivered from its head, one activation per outcome:
// the seed interleaves different links, never one link's outcomes.
type link struct {
	w      *World
	srv    *Server // nil when no server of that name is simulated
	server string
	gen    uint64
	label  string // "alpha#3"
	sink   messages.Sink
	prefix string // the JSON-RPC id prefix (DialRequest.IDPrefix)

	outbox    []delivery
	resolved  bool // the DialResult is pushed (or the dial was cancelled)
	delivered bool // the DialResult is delivered
	dialTimer clock.Timer
	conn      *simConn
	credit    bool // the head of the outbox has its credit (World.unblock took it)
}

// delivery is one outcome waiting in a link's outbox.
type delivery struct {
	msg  any
	line string // what the trace says when it is delivered
	ok   bool   // a successful DialResult
	// A stream's StreamSent and StreamNotification go to the stream's own
	// sink, a notification only once it has one of the stream's credits
	// (the link waits for one, as a production reader does).
	sink    messages.Sink
	credits *messages.Credits
	// delivered, when set, runs as the outcome is handed over.
	delivered func()
}

// Dial implements messages.Dialer: a dial of a simulated server.
func (w *World) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	l := &link{w: w, srv: w.servers[req.Server], server: req.Server, gen: req.Gen, label: fmt.Sprintf("%s#%d", req.Server, req.Gen), sink: sink, prefix: req.IDPrefix}
	w.Tracef("%s > dial", l.label)
	w.inv.dialStarted(req.Server)
	if l.srv == nil {
		l.resolve(dialPlan{fail: messages.Errorf(messages.KindConnectFailed, req.Server, "no such simulated server")})
		return l
	}
	l.srv.links = append(l.srv.links, l)
	plan := l.srv.planDial()
	if plan.note != "" {
		w.Tracef("%s ! %s", l.label, plan.note)
	}
	if plan.delay > 0 {
		l.dialTimer = w.Clock.AfterFunc(plan.delay, func() { l.resolve(plan) })
	} else {
		l.resolve(plan)
	}
	return l
}

// resolve pushes the dial's outcome.
func (l *link) resolve(p dialPlan) {
	if l.resolved {
		return
	}
	l.resolved = true
	l.w.inv.dialEnded(l.server)
	if p.delay >= 15*time.Second {
		// Longer than a subscription's activation timeout: the attempts
		// that waited for it ended without reaching the server.
		l.w.inv.evShaky(l.server)
	}
	if p.fail != nil {
		l.w.inv.evShaky(l.server)
		l.push(delivery{msg: messages.DialResult{Server: l.server, Gen: l.gen, Err: p.fail}, line: "dial failed: " + describeErr(p.fail)})
		return
	}
	l.conn = &simConn{l: l, pending: map[messages.OpID]*request{}, routes: map[string]*route{}, declared: map[string]bool{}}
	info := messages.ServerInfo{Transport: messages.TransportStdio, ProtocolVersion: messages.Protocol20251125, Name: "sim-" + l.srv.Name, Version: "1.0",
		// The generation, where the host can read which connection a
		// protocol session is bound to (Session.ServerInfo).
		Capabilities: json.RawMessage(fmt.Sprintf(`{"experimental":{"sim":{"gen":%d}}}`, l.gen))}
	l.push(delivery{msg: messages.DialResult{Server: l.srv.Name, Gen: l.gen, Conn: l.conn, Info: info}, line: "dial ok", ok: true})
	if p.crash {
		l.w.inv.evShaky(l.server)
		l.conn.crash("the server exited during startup")
	}
}

// Cancel implements messages.Dialing: the DialResult, unless already
// pushed, becomes KindAborted.
func (l *link) Cancel() {
	l.w.Tracef("%s > cancel dial", l.label)
	l.w.inv.portUsed(l.label, "Dialing.Cancel")
	l.w.inv.evShaky(l.server)
	if l.resolved {
		return
	}
	if l.dialTimer != nil {
		l.dialTimer.Stop()
	}
	l.resolve(dialPlan{fail: messages.Errorf(messages.KindAborted, l.server, "connect cancelled")})
}

// push queues an outcome behind the link's earlier ones.
func (l *link) push(d delivery) {
	l.outbox = append(l.outbox, d)
	l.w.Disp.Schedule(l.deliver)
}

// deliver hands the oldest queued outcome to the runtime. A stream frame
// without a credit stays at the head, and the link waits (World.unblock).
func (l *link) deliver() {
	d := l.outbox[0]
	if d.credits != nil && !l.credit {
		if !d.credits.TryAcquire() {
			l.w.Tracef("%s ! waiting for a credit", l.label)
			l.w.blocked = append(l.w.blocked, l)
			return
		}
	}
	l.credit = false
	l.outbox = l.outbox[1:]
	l.w.Tracef("%s < %s", l.label, d.line)
	l.w.inv.portDelivered(l.server)
	if d.delivered != nil {
		d.delivered()
	}
	if d.sink != nil {
		d.sink(d.msg)
		return
	}
	if _, ok := d.msg.(messages.DialResult); ok {
		l.delivered = true
	}
	if d.ok {
		l.w.inv.dialSucceeded(l.srv.Name)
	}
	if _, ok := d.msg.(messages.ConnClosed); ok {
		l.conn.state = connGone
	}
	l.sink(d.msg)
}

// connState is where a simulated connection stands.
type connState int

const (
	connLive    connState = iota // up
	connExiting                  // crashed or closing; its ConnClosed is on the way
	connClosed                   // its ConnClosed is pushed
	connGone                     // its ConnClosed is delivered
)

// simConn is one simulated connection, a messages.Conn.
type simConn struct {
	l       *link
	state   connState
	pending map[messages.OpID]*request // received, not yet answered

	routes   map[string]*route // live streams by subscription id (streams.go)
	declared map[string]bool   // every method a stream of the connection declared
	streams  []*simStream      // every stream received, oldest first
}

// request is one request the server received and has not answered.
type request struct {
	op     messages.Op
	timer  clock.Timer // the answer's latency; nil when it hangs
	stream *simStream  // a stream request's server side; nil for others
}

// Send implements messages.Conn.
func (c *simConn) Send(op messages.Op) {
	l := c.l
	l.w.Tracef("%s > %d %s", l.label, op.ID, describeOp(op))
	l.w.inv.portUsed(l.label, "Conn.Send")
	if c.state != connLive {
		// The process is gone: not a byte of the request was written.
		l.w.inv.notSent(l.srv.Name, op)
		l.w.inv.evShaky(l.srv.Name)
		l.push(delivery{msg: messages.OpResult{Server: l.srv.Name, Gen: l.gen, ID: op.ID, NotSent: true,
			Err: messages.Errorf(messages.KindDisconnected, l.srv.Name, "connection closed")}, line: fmt.Sprintf("%d not sent", op.ID)})
		return
	}
	l.w.inv.received(l, op)
	plan := l.srv.planRequest(op.Method)
	if plan.note != "" {
		l.w.Tracef("%s ! %d %s", l.label, op.ID, plan.note)
	}
	r := &request{op: op}
	c.pending[op.ID] = r
	if op.Stream != nil {
		c.openStream(op, r)
		c.streams = append(c.streams, r.stream)
	}
	switch {
	case plan.hang:
	case plan.delay > 0:
		r.timer = l.w.Clock.AfterFunc(plan.delay, func() { c.act(r, plan) })
	default:
		c.act(r, plan)
	}
}

// act carries out the plan for a request when its latency has passed.
func (c *simConn) act(r *request, p reqPlan) {
	if c.pending[r.op.ID] != r {
		return
	}
	if p.crashBefore {
		c.crash("the server exited while handling a request")
		return
	}
	switch {
	case p.err != nil:
		c.answer(r, nil, p.err)
	case r.stream != nil:
		r.stream.start() // the stream's answer comes when it ends
	default:
		result, err := c.l.srv.handle(r.op, p.toolError)
		c.answer(r, result, err)
	}
	if p.crashAfter {
		c.crash("the server exited after answering")
	}
}

// answer sends a request's response (a result, or a JSON-RPC error).
func (c *simConn) answer(r *request, result json.RawMessage, err *messages.Error) {
	c.forget(r)
	res := messages.OpResult{Server: c.l.srv.Name, Gen: c.l.gen, ID: r.op.ID, Result: result, Err: err}
	line := fmt.Sprintf("%d ok %s", r.op.ID, describeResult(r.op.Method, result))
	if err != nil {
		line = fmt.Sprintf("%d error %s", r.op.ID, describeErr(err))
	}
	d := delivery{msg: res, line: line}
	if st := r.stream; st != nil {
		c.dropRoute(st)
		d.delivered = func() { c.l.w.inv.streamAnswered(st.host, err) }
	}
	c.l.push(d)
}

// forget drops a request the server has answered (its latency timer
// too: a stream can end before its plan started).
func (c *simConn) forget(r *request) {
	if r.timer != nil {
		r.timer.Stop()
	}
	delete(c.pending, r.op.ID)
}

// crash is the server process exiting: every request in flight ends with
// KindDisconnected, then (after the server's ExitDelay) ConnClosed says why.
func (c *simConn) crash(why string) {
	if c.state != connLive {
		return
	}
	l := c.l
	l.w.Tracef("%s ! crash: %s", l.label, why)
	// A reopen given a session on this connection just before it died is
	// refused without reaching the server: an attempt with no open.
	l.w.inv.evShaky(l.srv.Name)
	c.state = connExiting
	c.failPending(messages.Errorf(messages.KindDisconnected, l.srv.Name, "%s", why))
	closed := func() {
		c.state = connClosed
		err := messages.Errorf(messages.KindDisconnected, l.srv.Name, "server process exited (status 1)")
		l.push(delivery{msg: messages.ConnClosed{Server: l.srv.Name, Gen: l.gen, Err: err}, line: "closed: " + describeErr(err)})
	}
	if d := l.srv.ExitDelay; d > 0 {
		l.w.Clock.AfterFunc(d, closed)
	} else {
		closed()
	}
}

// failPending ends every unanswered request with err, in id order.
func (c *simConn) failPending(err *messages.Error) {
	for _, id := range sortedIDs(c.pending) {
		r := c.pending[id]
		if r.timer != nil {
			r.timer.Stop()
		}
		if r.stream != nil {
			c.dropRoute(r.stream)
		}
		delete(c.pending, id)
		c.l.push(delivery{msg: messages.OpResult{Server: c.l.srv.Name, Gen: c.l.gen, ID: id, Err: err}, line: fmt.Sprintf("%d error %s", id, describeErr(err))})
	}
}

// Cancel implements messages.Conn: the request ends with KindAborted
// unless it was answered already.
func (c *simConn) Cancel(id messages.OpID) {
	l := c.l
	l.w.Tracef("%s > cancel %d", l.label, id)
	l.w.inv.portUsed(l.label, "Conn.Cancel")
	r := c.pending[id]
	if r == nil {
		return
	}
	if r.timer != nil {
		r.timer.Stop()
	}
	delete(c.pending, id)
	l.push(delivery{msg: messages.OpResult{Server: l.srv.Name, Gen: l.gen, ID: id,
		Err: messages.Errorf(messages.KindAborted, l.srv.Name, "request cancelled")}, line: fmt.Sprintf("%d aborted", id)})
	if st := r.stream; st != nil {
		c.dropRoute(st)
		st.sendLate() // frames the server sent before it read the cancellation
	}
}

// Notify implements messages.Conn.
func (c *simConn) Notify(method string, _ json.RawMessage) {
	c.l.w.Tracef("%s > notify %s", c.l.label, method)
	c.l.w.inv.portUsed(c.l.label, "Conn.Notify")
}

// Close implements messages.Conn: requests still in flight end with
// KindDisconnected, then (after the server's ReapDelay) ConnClosed with a
// nil Err follows.
func (c *simConn) Close() {
	l := c.l
	l.w.Tracef("%s > close", l.label)
	l.w.inv.portUsed(l.label, "Conn.Close")
	if c.state != connLive {
		return
	}
	// Frames still on their way (a connection replaced by a fresh
	// connect, say) never reach their subscriptions (invariant 21).
	l.w.inv.evShaky(l.srv.Name)
	l.w.inv.closing(l.label, c)
	c.state = connExiting
	c.failPending(messages.Errorf(messages.KindDisconnected, l.srv.Name, "connection closed"))
	closed := func() {
		c.state = connClosed
		l.push(delivery{msg: messages.ConnClosed{Server: l.srv.Name, Gen: l.gen}, line: "closed"})
	}
	if d := l.srv.ReapDelay; d > 0 {
		l.w.Clock.AfterFunc(d, closed)
	} else {
		closed()
	}
}

// sortedIDs returns a request map's ids in increasing order.
func sortedIDs(m map[messages.OpID]*request) []messages.OpID {
	ids := make([]messages.OpID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}
