package simtests

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// The protocol-extension invariants:
//   - a stream's handler receives exactly the frames the port handed to
//     the stream, in order, and nothing after the stream ended or after
//     Close returned;
//   - every stream and observer ends exactly once, for a reason the host
//     saw happen: cancelled after the host cancelled it, closed its
//     session, disposed the protocol or shut down; ended after the server
//     answered or sent notifications/cancelled; error after a JSON-RPC
//     error (whose code and data the end keeps) or a failing handler;
//     disconnected after its connection ended or was replaced;
//   - once nothing is queued, every session whose connection has ended is
//     Done and every stream and observer of it has ended;
//   - a session's requests and streams reach only the connection it is
//     bound to: nothing moves to a new connection;
//   - leases: with nothing in flight, a server holds one lease per open
//     stream and observer, and none otherwise; ServerStatus.LateFrames
//     counts exactly the late frames the port reported;
//   - after Close returns every session is Done and every stream and
//     observer has ended, once: its End is still the one it ended with.

// frameRouted is the port handing frame seq to the host's stream.
func (c *checker) frameRouted(host string, seq int) {
	if x := c.stream(host); x != nil {
		x.routed = append(x.routed, seq)
	}
}

// lateFrame is the port reporting a late frame of server.
func (c *checker) lateFrame(server string) { c.late[server]++ }

// streamAnswered is the server's answer to a stream reaching the runtime.
func (c *checker) streamAnswered(host string, err *messages.Error) {
	x := c.stream(host)
	switch {
	case x == nil:
	case err == nil:
		x.answered = true
	case err.Kind == messages.KindRPC:
		x.rpcErr = err
	}
}

func (c *checker) stream(host string) *hostStream {
	if c.w.Host.ps == nil {
		return nil
	}
	return c.w.Host.ps.byStream[host]
}

// handled checks one frame reaching a handler (x.delivered counts it).
func (c *checker) handled(x *hostStream, seq int) {
	if c.closed {
		c.w.violate("host %s: a frame reached its handler after Close returned", x.id)
	}
	select {
	case <-x.done:
		c.w.violate("host %s: a frame reached its handler after the stream ended", x.id)
	default:
	}
	if x.observer {
		return
	}
	switch k := x.delivered; {
	case k > len(x.routed):
		c.w.violate("host %s: frame seq=%d reached the handler, but the port handed over only %d", x.id, seq, len(x.routed))
	case x.routed[k-1] != seq:
		c.w.violate("host %s: frame %d is seq=%d, the port handed over seq=%d", x.id, k, seq, x.routed[k-1])
	}
}

// sent checks a session's request or stream reaching a server: only on
// the connection its session is bound to.
func (c *checker) sentOn(l *link, op messages.Op) {
	if c.w.Host.ps == nil {
		return
	}
	var p struct {
		Stream string `json:"stream"`
		Req    string `json:"req"`
	}
	if json.Unmarshal(op.Params, &p) != nil {
		return
	}
	var hs *hostSession
	if x := c.stream(p.Stream); x != nil && op.Stream != nil {
		x.gen = l.gen
		hs = x.sess
	} else if req := c.w.Host.byID[p.Req]; req != nil && req.kind == "prequest" {
		hs = c.w.Host.ps.byID[req.session]
	}
	if hs != nil && hs.gen != l.gen {
		c.w.violate("%s: %s of session %s (bound to generation %d) reached another connection", l.label, op.Method, hs.id, hs.gen)
	}
}

// streamNotSent is a stream request the port answered NotSent.
func (c *checker) streamNotSent(op messages.Op) {
	var p struct {
		Stream string `json:"stream"`
	}
	_ = json.Unmarshal(op.Params, &p)
	if x := c.stream(p.Stream); x != nil {
		x.notSent = true
	}
}

// replacing is a fresh connect of server starting: the sessions bound to
// its connection so far may lose it.
func (c *checker) replacing(server string) {
	if ps := c.w.Host.ps; ps != nil {
		for _, hs := range ps.sessions {
			if hs.server == server {
				hs.replaced = true
			}
		}
	}
}

// connEnded reports whether the connection a session is bound to has
// ended, or was replaced (a newer dial of the server has started).
func (c *checker) connEnded(hs *hostSession) bool {
	s := c.w.servers[hs.server]
	for _, l := range s.links {
		if l.gen > hs.gen {
			return true // a newer dial: the runtime replaced it, or it had ended
		}
		if l.gen == hs.gen && (l.conn == nil || l.conn.state != connLive) {
			return true
		}
	}
	return hs.gen == 0 || hs.replaced
}

// streamEnded checks a stream's or observer's end against what the host
// saw happen before it.
func (c *checker) streamEnded(x *hostStream) {
	e := x.end
	shutdown := c.w.Host.byID["close"] != nil
	ok := false
	switch e.Reason {
	case messages.EndCancelled:
		// A crashed server actor's sessions stop with it, and their
		// streams end cancelled, as at shutdown.
		ok = x.cancelled || shutdown || c.w.crashesFired(messages.ActorServer) > 0
	case messages.EndEnded:
		ok = x.answered
	case messages.EndError:
		crashed := strings.Contains(e.Error, "actor crashed") &&
			c.w.crashesFired(messages.ActorStream, messages.ActorObserver, messages.ActorSession, messages.ActorServer) > 0
		ok = x.rpcErr != nil || x.handlerError || crashed
		if x.rpcErr != nil && !x.handlerError && !crashed {
			c.protocolErrorKept(x)
		}
	case messages.EndDisconnected:
		ok = x.notSent || x.lateOpen || shutdown || c.connEnded(x.sess) ||
			strings.Contains(e.Error, "actor crashed") && c.w.crashesFired(messages.ActorSession, messages.ActorServer) > 0 // refused by its crashed session
	}
	if x.sent && x.gen == 0 {
		c.w.violate("host %s: Sent is closed, but its request never reached the server", x.id)
	}
	switch {
	case ok:
	case e.Reason == messages.EndDisconnected:
		// The runtime may give a connection up before the port sees it
		// end (a failed health check): then it must close it, which
		// bindings checks once nothing is in flight.
		c.givenUp = append(c.givenUp, x)
	default:
		c.w.violate("host %s ended %s, but nothing the host saw explains it (cancelled=%v answered=%v rpcError=%v handlerFailed=%v connectionEnded=%v)",
			x.id, e.Reason, x.cancelled, x.answered, x.rpcErr != nil, x.handlerError, c.connEnded(x.sess))
	}
}

// protocolErrorKept checks that a stream ended by a JSON-RPC error keeps
// its code and data (only when the code is a number: an error object
// without one, read as code 0, keeps none).
func (c *checker) protocolErrorKept(x *hostStream) {
	want, got := x.rpcErr, x.end.ProtocolError
	switch {
	case want.RPCCode == 0:
		if got != nil {
			c.w.violate("host %s ended with a protocol error %+v for an error without a code", x.id, got)
		}
	case got == nil:
		c.w.violate("host %s ended with a JSON-RPC error but without its code and data", x.id)
	case got.Code != want.RPCCode || !bytes.Equal(got.Data, want.RPCData):
		c.w.violate("host %s ended with code=%d data=%s, the server sent code=%d data=%s", x.id, got.Code, got.Data, want.RPCCode, want.RPCData)
	}
}

// bindings checks, when nothing is queued, that every session whose
// connection has gone (its ConnClosed delivered) is Done, with its
// streams and observers ended.
func (c *checker) bindings() {
	ps := c.w.Host.ps
	if ps == nil || c.w.Disp.Pending() > 0 {
		return
	}
	gone := func(hs *hostSession) bool {
		for _, l := range c.w.servers[hs.server].links {
			if l.gen == hs.gen {
				return l.conn != nil && l.conn.state == connGone
			}
		}
		return false
	}
	// A server actor that crashed tells its sessions (and so their streams
	// and observers) when it restarts (they stop with the crashed
	// incarnation), after the policy's delay (at most 10 s).
	restarting := c.w.crash.serverAt > 0 && c.w.Now()-c.w.crash.serverAt <= 10*time.Second
	for _, hs := range ps.sessions {
		if !hs.done && gone(hs) && !restarting {
			c.w.violate("session %s: its connection %s#%d has ended, but it is not Done", hs.id, hs.server, hs.gen)
		}
	}
	for _, x := range ps.streams {
		if !x.ended && gone(x.sess) && !restarting {
			c.w.violate("host %s: its connection %s#%d has ended, but it has not", x.id, x.sess.server, x.sess.gen)
		}
	}
	if len(c.givenUp) == 0 || c.outstanding() > 0 || len(c.w.blocked) > 0 {
		return
	}
	for _, x := range c.givenUp {
		if !c.connEnded(x.sess) {
			c.w.violate("host %s ended disconnected, but its connection %s#%d is still up with nothing in flight", x.id, x.sess.server, x.sess.gen)
		}
	}
	c.givenUp = nil
}

// openLeases returns, per server, how many streams and observers are
// open: the leases they hold.
func (c *checker) openLeases() map[string]int {
	out := map[string]int{}
	if ps := c.w.Host.ps; ps != nil {
		for _, x := range ps.streams {
			if x.ended {
				continue
			}
			select {
			case <-x.done: // ended, not yet noticed (a refusal ends it at once)
			default:
				out[x.sess.server]++
			}
		}
	}
	for _, name := range c.w.order {
		for _, l := range c.w.servers[name].links {
			if l.conn == nil || l.conn.state != connLive {
				continue
			}
			for _, r := range l.conn.pending {
				if r.stream != nil && r.stream.ev != nil {
					out[name]++ // an events stream holds a lease too
				}
			}
		}
	}
	return out
}

// openStream reports whether a stream request belongs to a host stream
// that has not ended: it stays unanswered by design.
func (c *checker) openStream(r *request) bool {
	if r.stream == nil {
		return false
	}
	if r.stream.ev != nil {
		return true // an events stream: open until the runtime cancels it
	}
	x := c.stream(r.stream.host)
	return x != nil && !x.ended
}

// protoAfterClose checks that nothing of the protocol outlives Close.
func (c *checker) protoAfterClose() {
	ps := c.w.Host.ps
	if ps == nil {
		return
	}
	for _, hs := range ps.sessions {
		if !hs.done {
			c.w.violate("session %s is not Done after Close returned", hs.id)
		}
	}
	for _, x := range ps.streams {
		end := x.end
		switch {
		case !x.ended:
			c.w.violate("host %s has not ended after Close returned", x.id)
		case x.observer:
			end = x.obs.Closed()
		default:
			end = x.stream.Closed()
		}
		if describeEnd(end) != describeEnd(x.end) {
			c.w.violate("host %s ended twice: %s, then %s", x.id, describeEnd(x.end), describeEnd(end))
		}
	}
}
