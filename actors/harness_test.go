package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
	"github.com/mcprt/mcprt/transports"
)

// The tests of this package run the actors against real MCP servers in
// separate processes (the test binary re-executed as internal/testonly/testserver).
// Lifecycle time (idle timeouts, health checks, backoff, failure memory,
// deadlines, restart delays) runs on a manual clock that only the test
// advances; the transports keep the wall clock for their process grace
// periods, which well-behaved servers never reach. Nothing sleeps: tests wait
// on what the connection port delivers (recorded by recDialer) or on timers
// being armed (recorded by testClock).

// Shared helpers (internal/testonly/testkit), under this package's names.
type (
	signal    = testkit.Signal
	testClock = testkit.Clock
)

var (
	testCtx      = testkit.Ctx
	until        = testkit.Until
	poll         = testkit.Poll
	procGone     = testkit.ProcGone
	newTestClock = testkit.NewClock
)

func TestMain(m *testing.M) {
	testserver.MainIfRequested()
	os.Exit(m.Run())
}

// recDialer decorates the real dialer: it records every dial, every
// outcome the port delivers and every request sent, can hold dial results
// back, and can make Conn.Send panic for one tool name (which crashes the
// server actor mid-call, since the actor calls Send from its Receive).
type recDialer struct {
	inner messages.Dialer
	sig   signal

	mu sync.Mutex
	// The fields below are guarded by mu.
	dials       map[string]int
	inflight    int // dials whose result has not been delivered
	maxInflight int
	hold        bool // hold dial results back
	held        []func()
	holdClosed  bool // hold ConnClosed back
	heldClosed  []func()
	results     []messages.DialResult
	closed      []messages.ConnClosed
	notes       []messages.ConnNotification
	opResults   map[string]int // by server
	sent        map[string]int // by "server method" and "server/tool"
	panicTool   string
}

func newRecDialer(inner messages.Dialer) *recDialer {
	return &recDialer{inner: inner, dials: map[string]int{}, opResults: map[string]int{}, sent: map[string]int{}}
}

func (d *recDialer) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	d.mu.Lock()
	d.dials[req.Server]++
	d.inflight++
	d.maxInflight = max(d.maxInflight, d.inflight)
	d.mu.Unlock()
	d.sig.Notify()
	return d.inner.Dial(req, func(msg any) { d.deliver(sink, msg) })
}

func (d *recDialer) deliver(sink messages.Sink, msg any) {
	switch m := msg.(type) {
	case messages.DialResult:
		if m.Conn != nil {
			m.Conn = &recConn{Conn: m.Conn, d: d, server: m.Server}
		}
		d.mu.Lock()
		if d.hold {
			d.held = append(d.held, func() { d.deliverDial(sink, m) })
			d.mu.Unlock()
			d.sig.Notify()
			return
		}
		d.mu.Unlock()
		d.deliverDial(sink, m)
		return
	case messages.ConnClosed:
		d.mu.Lock()
		if d.holdClosed {
			d.heldClosed = append(d.heldClosed, func() { d.deliverRest(sink, m) })
			d.mu.Unlock()
			d.sig.Notify()
			return
		}
		d.mu.Unlock()
	}
	d.deliverRest(sink, msg)
}

func (d *recDialer) deliverRest(sink messages.Sink, msg any) {
	sink(msg)
	d.mu.Lock()
	switch m := msg.(type) {
	case messages.OpResult:
		d.opResults[m.Server]++
	case messages.ConnNotification:
		d.notes = append(d.notes, m)
	case messages.ConnClosed:
		d.closed = append(d.closed, m)
	}
	d.mu.Unlock()
	d.sig.Notify()
}

// deliverDial counts the dial as finished before the actor hears of it, so
// a start slot it frees can never make the count overshoot.
func (d *recDialer) deliverDial(sink messages.Sink, m messages.DialResult) {
	d.mu.Lock()
	d.inflight--
	d.mu.Unlock()
	sink(m)
	d.mu.Lock()
	d.results = append(d.results, m)
	d.mu.Unlock()
	d.sig.Notify()
}

// setHold holds dial results back (true) or delivers the held ones in
// order and stops holding (false).
func (d *recDialer) setHold(on bool) {
	d.mu.Lock()
	d.hold = on
	held := d.held
	if !on {
		d.held = nil
	}
	d.mu.Unlock()
	if !on {
		for _, f := range held {
			f()
		}
	}
}

// setHoldClosed holds ConnClosed back (true), as if the connection's
// process took long to exit, or delivers the held ones (false).
func (d *recDialer) setHoldClosed(on bool) {
	d.mu.Lock()
	d.holdClosed = on
	held := d.heldClosed
	if !on {
		d.heldClosed = nil
	}
	d.mu.Unlock()
	if !on {
		for _, f := range held {
			f()
		}
	}
}

// panicOn makes Send panic for tools/call of "server/tool" ("" for none).
func (d *recDialer) panicOn(serverTool string) {
	d.mu.Lock()
	d.panicTool = serverTool
	d.mu.Unlock()
}

// with runs f under the lock, for reading the records.
func (d *recDialer) with(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f()
}

func (d *recDialer) dialCount(server string) (n int) {
	d.with(func() { n = d.dials[server] })
	return n
}

func (d *recDialer) sentCount(key string) (n int) {
	d.with(func() { n = d.sent[key] })
	return n
}

func (d *recDialer) wait(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	until(ctx, t, &d.sig, what, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return cond()
	})
}

// waitResult waits for the dial result of server's generation gen.
func (d *recDialer) waitResult(ctx context.Context, t *testing.T, server string, gen uint64) messages.DialResult {
	t.Helper()
	var r messages.DialResult
	d.wait(ctx, t, fmt.Sprintf("dial result %s gen %d", server, gen), func() bool {
		for _, x := range d.results {
			if x.Server == server && x.Gen == gen {
				r = x
				return true
			}
		}
		return false
	})
	return r
}

// waitClosed waits for the ConnClosed of server's generation gen.
func (d *recDialer) waitClosed(ctx context.Context, t *testing.T, server string, gen uint64) messages.ConnClosed {
	t.Helper()
	var c messages.ConnClosed
	d.wait(ctx, t, fmt.Sprintf("ConnClosed %s gen %d", server, gen), func() bool {
		for _, x := range d.closed {
			if x.Server == server && x.Gen == gen {
				c = x
				return true
			}
		}
		return false
	})
	return c
}

// recConn records the requests sent on a connection.
type recConn struct {
	messages.Conn
	d      *recDialer
	server string
}

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
	c.d.mu.Unlock()
	c.d.sig.Notify()
	if trigger {
		panic("test: Conn.Send panics on tool " + tool)
	}
	c.Conn.Send(op)
}

// rig is a running actor system over real transports.
type rig struct {
	t      *testing.T
	ctx    context.Context
	clk    *testClock
	real   *transports.Dialer
	dialer *recDialer
	sys    *System
}

// newRig starts the actors for servers; edit may change the Config.
func newRig(t *testing.T, servers []ServerConfig, edit ...func(*Config)) *rig {
	t.Helper()
	r := &rig{t: t, ctx: testCtx(t), clk: newTestClock(), real: &transports.Dialer{Clock: clock.Real{}}}
	r.dialer = newRecDialer(r.real)
	cfg := Config{Servers: servers, Clock: r.clk, Rand: clock.NewSeededRand(1), Dialer: r.dialer, ClientName: "mcprt-test", ClientVersion: "0"}
	for _, f := range edit {
		f(&cfg)
	}
	sys, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.sys = sys
	t.Cleanup(func() { r.close() })
	return r
}

// close shuts the system down and waits for every transport goroutine,
// failing the test (rather than hanging) if that does not happen.
func (r *rig) close() {
	r.dialer.setHold(false)
	r.dialer.setHoldClosed(false)
	done := make(chan error, 1)
	go func() {
		err := r.sys.Close()
		r.real.Wait()
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			r.t.Errorf("Close: %v", err)
		}
	case <-ctx.Done():
		r.t.Errorf("Close did not return")
	}
}

// stdio configures the test server over stdio with flags and extra
// environment; its call deadline is a day, so advancing the clock past an
// idle timeout never ends a call by accident.
func stdio(t *testing.T, name, flags string, env ...string) ServerConfig {
	return ServerConfig{
		Name:        name,
		Endpoint:    messages.Endpoint{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio "+flags, env...)},
		CallTimeout: 24 * time.Hour,
	}
}

func withPolicy(c ServerConfig, p supervisor.Policy) ServerConfig {
	c.Policy = p
	return c
}

// callParams builds tools/call params; progress adds a progress token, which
// makes the hang tool announce with a notification that it is running.
func callParams(tool, args, progress string) json.RawMessage {
	if args == "" {
		args = "{}"
	}
	meta := ""
	if progress != "" {
		meta = fmt.Sprintf(`,"_meta":{"progressToken":%q}`, progress)
	}
	return json.RawMessage(fmt.Sprintf(`{"name":%q,"arguments":%s%s}`, tool, args, meta))
}

// call makes a model's tool call and waits for it.
func (r *rig) call(ctx context.Context, server, tool, args string) messages.Reply {
	return r.sys.Request(ctx, server, "tools/call", callParams(tool, args, ""), messages.DeadlineCall, messages.OriginModel)
}

// start makes a tool call on its own goroutine and returns its reply channel.
func (r *rig) start(ctx context.Context, server, tool, args, progress string) <-chan messages.Reply {
	ch := make(chan messages.Reply, 1)
	go func() {
		ch <- r.sys.Request(ctx, server, "tools/call", callParams(tool, args, progress), messages.DeadlineCall, messages.OriginModel)
	}()
	return ch
}

// waitProgress waits until server sent a progress notification for token.
func (r *rig) waitProgress(server, token string) {
	r.t.Helper()
	r.dialer.wait(r.ctx, r.t, "progress "+token, func() bool {
		for _, n := range r.dialer.notes {
			if n.Server == server && n.Method == "notifications/progress" && strings.Contains(string(n.Params), `"`+token+`"`) {
				return true
			}
		}
		return false
	})
}

// recv waits for a reply.
func (r *rig) recv(ch <-chan messages.Reply, what string) messages.Reply {
	r.t.Helper()
	select {
	case rep := <-ch:
		return rep
	case <-r.ctx.Done():
		r.t.Fatalf("no reply to %s", what)
	}
	return messages.Reply{}
}

// status returns server's status; the query is ordered after every message
// this goroutine sent before, and after every port outcome already recorded.
func (r *rig) status(server string) messages.ServerStatus {
	r.t.Helper()
	for _, s := range r.sys.Status(r.ctx) {
		if s.Name == server {
			return s
		}
	}
	r.t.Fatalf("no status for %s", server)
	return messages.ServerStatus{}
}

// text returns the first text content of a successful tools/call reply.
func text(t *testing.T, rep messages.Reply) string {
	t.Helper()
	if rep.Err != nil {
		t.Fatalf("call failed: %v (%s)", rep.Err, rep.Err.Code())
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(rep.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("malformed result %s", rep.Result)
	}
	return res.Content[0].Text
}

// wantKind fails unless rep failed with kind.
func wantKind(t *testing.T, rep messages.Reply, kind messages.ErrorKind) {
	t.Helper()
	if rep.Err == nil || rep.Err.Kind != kind {
		t.Fatalf("want %s, got %+v (result %s)", kind.Code(), rep.Err, rep.Result)
	}
}

// wantState fails unless server is in state.
func (r *rig) wantState(server string, state messages.ServerState) messages.ServerStatus {
	r.t.Helper()
	st := r.status(server)
	if st.State != state {
		r.t.Fatalf("%s: state %s, want %s (last error %v)", server, st.State, state, st.LastError)
	}
	return st
}
