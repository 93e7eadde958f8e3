package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// RecDialer decorates a real dialer for tests: it records every dial, every
// dial result, ConnClosed and OpResult the port delivers, the progress
// notifications and every request sent, and it can change what happens:
// hold dial results or ConnClosed back, make Conn.Send panic for one tool
// (which crashes the server actor mid-call, since the actor sends from its
// Receive), add a progress token to every tools/call (so that a test knows
// the server runs the call), and swallow Conn.Close (a transport that never
// finishes closing). Tests wait on what it records (Wait, WaitResult,
// WaitClosed, WaitProgress) instead of sleeping.
type RecDialer struct {
	inner messages.Dialer
	sig   Signal

	mu sync.Mutex
	// The fields below are guarded by mu.
	dials        map[string]int
	inflight     int // dials whose result has not been delivered
	maxInflight  int
	hold         bool // hold dial results back
	held         []func()
	holdClosed   bool // hold ConnClosed back
	heldClosed   []func()
	results      []messages.DialResult
	closed       []messages.ConnClosed
	opResults    map[string]int // by server
	sent         map[string]int // by "server method" and "server/tool"
	notes        []messages.ConnNotification
	progressed   int    // progress notifications received
	progress     bool   // add a progress token to every tools/call
	panicTool    string // Send panics for tools/call of this "server/tool"
	swallowClose bool
	swallowed    []messages.Conn
}

// NewRecDialer decorates inner.
func NewRecDialer(inner messages.Dialer) *RecDialer {
	return &RecDialer{inner: inner, dials: map[string]int{}, opResults: map[string]int{}, sent: map[string]int{}}
}

// Dial records the dial and dials through the inner dialer.
func (d *RecDialer) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	d.mu.Lock()
	d.dials[req.Server]++
	d.inflight++
	d.maxInflight = max(d.maxInflight, d.inflight)
	d.mu.Unlock()
	d.sig.Notify()
	return d.inner.Dial(req, func(msg any) { d.deliver(sink, msg) })
}

func (d *RecDialer) deliver(sink messages.Sink, msg any) {
	switch m := msg.(type) {
	case messages.DialResult:
		if m.Conn != nil {
			m.Conn = &recConn{Conn: m.Conn, d: d, server: m.Server}
		}
		if d.holding(&d.hold, &d.held, func() { d.deliverDial(sink, m) }) {
			return
		}
		d.deliverDial(sink, m)
		return
	case messages.ConnClosed:
		if d.holding(&d.holdClosed, &d.heldClosed, func() { d.deliverRest(sink, m) }) {
			return
		}
	}
	d.deliverRest(sink, msg)
}

// holding queues f on held when hold is set.
func (d *RecDialer) holding(hold *bool, held *[]func(), f func()) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !*hold {
		return false
	}
	*held = append(*held, f)
	d.sig.Notify()
	return true
}

func (d *RecDialer) deliverRest(sink messages.Sink, msg any) {
	sink(msg)
	d.mu.Lock()
	switch m := msg.(type) {
	case messages.OpResult:
		d.opResults[m.Server]++
	case messages.ConnNotification:
		d.notes = append(d.notes, m)
		if m.Method == "notifications/progress" {
			d.progressed++
		}
	case messages.ConnClosed:
		d.closed = append(d.closed, m)
	}
	d.mu.Unlock()
	d.sig.Notify()
}

// deliverDial counts the dial as finished before the actor hears of it, so
// a start slot it frees can never make the count overshoot.
func (d *RecDialer) deliverDial(sink messages.Sink, m messages.DialResult) {
	d.mu.Lock()
	d.inflight--
	d.mu.Unlock()
	sink(m)
	d.mu.Lock()
	d.results = append(d.results, m)
	d.mu.Unlock()
	d.sig.Notify()
}

// SetHold holds dial results back (true) or delivers the held ones in
// order and stops holding (false).
func (d *RecDialer) SetHold(on bool) { d.release(&d.hold, &d.held, on) }

// SetHoldClosed holds ConnClosed back (true), as if the connection's
// process took long to exit, or delivers the held ones (false).
func (d *RecDialer) SetHoldClosed(on bool) { d.release(&d.holdClosed, &d.heldClosed, on) }

func (d *RecDialer) release(hold *bool, held *[]func(), on bool) {
	d.mu.Lock()
	*hold = on
	fs := *held
	if !on {
		*held = nil
	}
	d.mu.Unlock()
	if !on {
		for _, f := range fs {
			f()
		}
	}
}

// PanicOn makes Send panic for tools/call of "server/tool" ("" for none).
func (d *RecDialer) PanicOn(serverTool string) {
	d.mu.Lock()
	d.panicTool = serverTool
	d.mu.Unlock()
}

// SetProgress adds a progress token to every tools/call from now on.
func (d *RecDialer) SetProgress(on bool) {
	d.mu.Lock()
	d.progress = on
	d.mu.Unlock()
}

// SwallowClose makes Conn.Close do nothing until ReleaseClosed.
func (d *RecDialer) SwallowClose() {
	d.mu.Lock()
	d.swallowClose = true
	d.mu.Unlock()
}

// ReleaseClosed stops swallowing Close and closes what was swallowed.
func (d *RecDialer) ReleaseClosed() {
	d.mu.Lock()
	d.swallowClose = false
	conns := d.swallowed
	d.swallowed = nil
	d.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// read runs f under the lock.
func (d *RecDialer) read(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f()
}

// DialCount returns how often server was dialed.
func (d *RecDialer) DialCount(server string) (n int) {
	d.read(func() { n = d.dials[server] })
	return n
}

// SentCount returns how many requests were sent under key: "server
// method", or "server/tool" for tools/call.
func (d *RecDialer) SentCount(key string) (n int) {
	d.read(func() { n = d.sent[key] })
	return n
}

// OpResults returns how many OpResults server's connections delivered.
func (d *RecDialer) OpResults(server string) (n int) {
	d.read(func() { n = d.opResults[server] })
	return n
}

// Held returns how many dial results are held back.
func (d *RecDialer) Held() (n int) {
	d.read(func() { n = len(d.held) })
	return n
}

// Results returns how many dial results were delivered.
func (d *RecDialer) Results() (n int) {
	d.read(func() { n = len(d.results) })
	return n
}

// MaxInflight returns the most dials that ran at once.
func (d *RecDialer) MaxInflight() (n int) {
	d.read(func() { n = d.maxInflight })
	return n
}

// Closed returns the ConnClosed delivered so far.
func (d *RecDialer) Closed() (c []messages.ConnClosed) {
	d.read(func() { c = append(c, d.closed...) })
	return c
}

// Notes returns the notifications delivered so far.
func (d *RecDialer) Notes() (n []messages.ConnNotification) {
	d.read(func() { n = append(n, d.notes...) })
	return n
}

// Signal is notified whenever the dialer records something.
func (d *RecDialer) Signal() *Signal { return &d.sig }

// Wait waits until cond holds, re-checking it whenever the dialer records
// something.
func (d *RecDialer) Wait(ctx context.Context, t testing.TB, what string, cond func() bool) {
	t.Helper()
	Until(ctx, t, &d.sig, what, cond)
}

// WaitResult waits for the dial result of server's generation gen.
func (d *RecDialer) WaitResult(ctx context.Context, t testing.TB, server string, gen uint64) (r messages.DialResult) {
	t.Helper()
	d.Wait(ctx, t, fmt.Sprintf("dial result %s gen %d", server, gen), func() (ok bool) {
		d.read(func() {
			for _, x := range d.results {
				if !ok && x.Server == server && x.Gen == gen {
					r, ok = x, true
				}
			}
		})
		return ok
	})
	return r
}

// WaitClosed waits for the ConnClosed of server's generation gen.
func (d *RecDialer) WaitClosed(ctx context.Context, t testing.TB, server string, gen uint64) (c messages.ConnClosed) {
	t.Helper()
	d.Wait(ctx, t, fmt.Sprintf("ConnClosed %s gen %d", server, gen), func() (ok bool) {
		d.read(func() {
			for _, x := range d.closed {
				if !ok && x.Server == server && x.Gen == gen {
					c, ok = x, true
				}
			}
		})
		return ok
	})
	return c
}

// WaitProgress waits until n progress notifications have arrived.
func (d *RecDialer) WaitProgress(ctx context.Context, t testing.TB, n int) {
	t.Helper()
	d.Wait(ctx, t, "a progress notification", func() (ok bool) {
		d.read(func() { ok = d.progressed >= n })
		return ok
	})
}

// recConn records the requests sent on a connection and applies the
// dialer's Send and Close behaviour.
type recConn struct {
	messages.Conn
	d      *RecDialer
	server string
}

// Send records op, panics if its tool is the one to panic on, adds a
// progress token if asked, and sends it.
func (c *recConn) Send(op messages.Op) {
	tool := ""
	if op.Method == "tools/call" {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(op.Params, &p)
		tool = p.Name
	}
	c.d.mu.Lock()
	c.d.sent[c.server+" "+op.Method]++
	if tool != "" {
		c.d.sent[c.server+"/"+tool]++
	}
	trigger := tool != "" && c.server+"/"+tool == c.d.panicTool
	progress := c.d.progress
	c.d.mu.Unlock()
	c.d.sig.Notify()
	if trigger {
		panic("test: Conn.Send panics on tool " + tool)
	}
	if progress && op.Method == "tools/call" {
		var p map[string]json.RawMessage
		if json.Unmarshal(op.Params, &p) == nil {
			p["_meta"] = json.RawMessage(fmt.Sprintf(`{"progressToken":"op-%d"}`, op.ID))
			op.Params, _ = json.Marshal(p)
		}
	}
	c.Conn.Send(op)
}

// Close closes the connection unless the dialer swallows closes.
func (c *recConn) Close() {
	c.d.mu.Lock()
	if c.d.swallowClose {
		c.d.swallowed = append(c.d.swallowed, c.Conn)
		c.d.mu.Unlock()
		return
	}
	c.d.mu.Unlock()
	c.Conn.Close()
}
