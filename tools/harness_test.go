package tools

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/transports"
)

// The proxy tool's tests run it over real actors and real transports
// against the test server in separate processes (the test binary
// re-executed as internal/testonly/testserver), with a manual clock.

func TestMain(m *testing.M) {
	testserver.MainIfRequested()
	os.Exit(m.Run())
}

// countingDialer decorates the real dialer, counting dials and the requests
// sent by method, per server.
type countingDialer struct {
	inner messages.Dialer

	mu sync.Mutex
	// The fields below are guarded by mu.
	dials map[string]int
	sent  map[string]int // by "server method"
}

func (d *countingDialer) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	d.mu.Lock()
	d.dials[req.Server]++
	d.mu.Unlock()
	return d.inner.Dial(req, func(msg any) {
		if m, ok := msg.(messages.DialResult); ok && m.Conn != nil {
			m.Conn = &countingConn{Conn: m.Conn, d: d, server: m.Server}
			msg = m
		}
		sink(msg)
	})
}

func (d *countingDialer) count(server, method string) (dials, sent int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials[server], d.sent[server+" "+method]
}

type countingConn struct {
	messages.Conn
	d      *countingDialer
	server string
}

func (c *countingConn) Send(op messages.Op) {
	c.d.mu.Lock()
	c.d.sent[c.server+" "+op.Method]++
	c.d.mu.Unlock()
	c.Conn.Send(op)
}

// rig is the mcp tool over a running actor system.
type rig struct {
	t      *testing.T
	ctx    context.Context
	dialer *countingDialer
	sys    *actors.System
	mcp    Tool
}

// newRig starts lazy test servers named names, each with its command-line
// flags from flags; edit may change their configurations.
func newRig(t *testing.T, names []string, flags map[string]string, edit ...func(*actors.ServerConfig)) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	real := &transports.Dialer{Clock: clock.Real{}}
	r := &rig{t: t, ctx: ctx, dialer: &countingDialer{inner: real, dials: map[string]int{}, sent: map[string]int{}}}
	var servers []actors.ServerConfig
	for _, n := range names {
		sc := actors.ServerConfig{Name: n, ListOnConnect: true, Endpoint: messages.Endpoint{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio " + flags[n])}}
		for _, f := range edit {
			f(&sc)
		}
		servers = append(servers, sc)
	}
	sys, err := actors.Start(actors.Config{Servers: servers, Clock: clock.NewManual(time.Time{}), Rand: clock.NewSeededRand(5), Dialer: r.dialer})
	if err != nil {
		t.Fatal(err)
	}
	r.sys = sys
	r.mcp = NewMCP(sys, Options{ResultDir: t.TempDir()}).Tool()
	t.Cleanup(func() {
		if err := sys.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		real.Wait()
	})
	return r
}

func (r *rig) exec(args string) Result { return r.mcp.Execute(r.ctx, json.RawMessage(args)) }

// wantOK fails unless res succeeded with text want.
func wantOK(t *testing.T, res Result, want string) {
	t.Helper()
	if res.IsError || res.Text != want {
		t.Fatalf("want %q, got %q (error %v, details %v)", want, res.Text, res.IsError, res.Details)
	}
}

// wantCode fails unless res failed with code.
func wantCode(t *testing.T, res Result, code string) {
	t.Helper()
	if !res.IsError || res.ErrorCode() != code {
		t.Fatalf("want error %s, got %q (code %q)", code, res.Text, res.ErrorCode())
	}
}
