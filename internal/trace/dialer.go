package trace

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// Wrap returns a Dialer that traces the connections of the servers for
// which traced is true into w, and leaves the others alone.
func Wrap(inner messages.Dialer, clk clock.Clock, w *Writer, traced func(server string) bool) messages.Dialer {
	return &dialer{inner: inner, clk: clock.Or(clk), w: w, traced: traced}
}

type dialer struct {
	inner  messages.Dialer
	clk    clock.Clock
	w      *Writer
	traced func(string) bool
}

// Dial traces the dial, and the connection it opens.
func (d *dialer) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	if !d.traced(req.Server) {
		return d.inner.Dial(req, sink)
	}
	c := &conn{d: d, server: req.Server, gen: req.Gen, pending: map[messages.OpID]pending{}}
	start := d.clk.Now()
	c.record(Record{Dir: "-", Kind: "dial", Transport: req.Endpoint.Kind().String()})
	return d.inner.Dial(req, func(msg any) {
		switch m := msg.(type) {
		case messages.DialResult:
			msg = c.dialed(m, start)
		case *messages.DialResult:
			r := c.dialed(*m, start)
			msg = &r
		case messages.OpResult:
			c.result(m)
		case *messages.OpResult:
			c.result(*m)
		case messages.ConnNotification:
			c.record(Record{Dir: "in", Kind: "notification", Method: Method(m.Method), Bytes: len(m.Params)})
		case *messages.ConnNotification:
			c.record(Record{Dir: "in", Kind: "notification", Method: Method(m.Method), Bytes: len(m.Params)})
		case messages.ConnClosed:
			c.record(Record{Dir: "-", Kind: "closed", End: endOf(m.Err, "ok")})
		case *messages.ConnClosed:
			c.record(Record{Dir: "-", Kind: "closed", End: endOf(m.Err, "ok")})
		}
		sink(msg)
	})
}

// pending is a request in flight.
type pending struct {
	method string
	start  time.Time
}

// conn is one traced connection.
type conn struct {
	d       *dialer
	server  string
	gen     uint64
	inner   messages.Conn
	mu      sync.Mutex
	pending map[messages.OpID]pending // guarded by mu
}

func (c *conn) record(r Record) {
	r.Time = c.d.clk.Now().UTC().Format(time.RFC3339Nano)
	r.Server, r.Gen = c.server, c.gen
	c.d.w.Write(r)
}

// dialed records a dial's outcome and wraps the connection it opened.
func (c *conn) dialed(m messages.DialResult, start time.Time) messages.DialResult {
	ms := millis(c.d.clk.Now().Sub(start))
	if m.Err != nil || m.Conn == nil {
		c.record(Record{Dir: "-", Kind: "connected", Ms: &ms, End: endOf(m.Err, "failed")})
		return m
	}
	c.record(Record{Dir: "-", Kind: "connected", Ms: &ms, End: "ok", Transport: m.Info.Transport.String(), Protocol: Method(m.Info.ProtocolVersion)})
	c.inner = m.Conn
	m.Conn = c
	return m
}

// result records a request's response.
func (c *conn) result(m messages.OpResult) {
	c.mu.Lock()
	p, ok := c.pending[m.ID]
	delete(c.pending, m.ID)
	c.mu.Unlock()
	r := Record{Dir: "in", Kind: "response", ID: uint64(m.ID), Bytes: len(m.Result), End: endOf(m.Err, "ok")}
	switch {
	case m.NotSent:
		r.End = "not-sent"
	case m.ServerCancelled:
		r.End = "server-cancelled"
	}
	if ok {
		ms := millis(c.d.clk.Now().Sub(p.start))
		r.Method, r.Ms = p.method, &ms
	}
	c.record(r)
}

// Send records the request (and, for a stream, its frames) and sends it.
func (c *conn) Send(op messages.Op) {
	method := Method(op.Method)
	c.mu.Lock()
	c.pending[op.ID] = pending{method: method, start: c.d.clk.Now()}
	c.mu.Unlock()
	c.record(Record{Dir: "out", Kind: "request", Method: method, ID: uint64(op.ID), Bytes: len(op.Params)})
	if op.Stream != nil && op.Stream.Sink != nil {
		spec := *op.Stream
		next := spec.Sink
		spec.Sink = func(msg any) {
			switch m := msg.(type) {
			case messages.StreamNotification:
				c.record(Record{Dir: "in", Kind: "frame", Method: Method(m.Method), ID: uint64(m.ID), Bytes: len(m.Params)})
			case *messages.StreamNotification:
				c.record(Record{Dir: "in", Kind: "frame", Method: Method(m.Method), ID: uint64(m.ID), Bytes: len(m.Params)})
			}
			next(msg)
		}
		op.Stream = &spec
	}
	c.inner.Send(op)
}

// Cancel records and forwards a cancellation.
func (c *conn) Cancel(id messages.OpID) {
	c.record(Record{Dir: "out", Kind: "cancel", ID: uint64(id)})
	c.inner.Cancel(id)
}

// Notify records and forwards a notification.
func (c *conn) Notify(method string, params json.RawMessage) {
	c.record(Record{Dir: "out", Kind: "notification", Method: Method(method), Bytes: len(params)})
	c.inner.Notify(method, params)
}

// Close records and forwards the close.
func (c *conn) Close() {
	c.record(Record{Dir: "-", Kind: "close"})
	c.inner.Close()
}

// endOf is err's stable code, or ok when there is none.
func endOf(err *messages.Error, ok string) string {
	if err == nil {
		return ok
	}
	return err.Code()
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Method returns a method name fit for a trace: at most 128 ASCII
// letters, digits and "/_.-$", else "?" (a server's notification could
// name anything).
func Method(m string) string {
	if len(m) > 128 {
		return "?"
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '_' || c == '.' || c == '-' || c == '$') {
			return "?"
		}
	}
	return m
}

// WrapServerRequests traces the requests traced servers send to the
// client (elicitation, sampling, roots, ping) and the client's answers: the
// method, the sizes, the time the host took and how it ended (ok or
// rpc_error), never the question or the answer.
func WrapServerRequests(h messages.ServerRequestHandler, clk clock.Clock, w *Writer, traced func(server string) bool) messages.ServerRequestHandler {
	if h == nil {
		return nil
	}
	clk = clock.Or(clk)
	return func(ctx context.Context, r messages.ServerRequest) (json.RawMessage, *messages.RPCError) {
		if !traced(r.Server) {
			return h(ctx, r)
		}
		c := &conn{d: &dialer{clk: clk, w: w}, server: r.Server, gen: r.Gen}
		method := Method(r.Method)
		start := clk.Now()
		c.record(Record{Dir: "in", Kind: "server-request", Method: method, Bytes: len(r.Params)})
		res, rerr := h(ctx, r)
		ms := millis(clk.Now().Sub(start))
		end := "ok"
		if rerr != nil {
			end = "rpc_error"
		}
		c.record(Record{Dir: "out", Kind: "server-response", Method: method, Bytes: len(res), Ms: &ms, End: end})
		return res, rerr
	}
}
