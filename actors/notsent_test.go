package actors

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// unsentPort is a connection port whose first connections end before any
// request can be written: Send answers NotSent. Later connections answer.
type unsentPort struct {
	mu     sync.Mutex
	dials  int
	sent   []uint64 // generations that really received a tools/call
	deadUp int      // how many connections are dead on arrival
}

func (p *unsentPort) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	p.mu.Lock()
	p.dials++
	dead := p.dials <= p.deadUp
	p.mu.Unlock()
	sink(messages.DialResult{Server: req.Server, Gen: req.Gen, Conn: &unsentConn{p: p, gen: req.Gen, server: req.Server, sink: sink, dead: dead}})
	return unsentDialing{}
}

type unsentDialing struct{}

func (unsentDialing) Cancel() {}

type unsentConn struct {
	p      *unsentPort
	gen    uint64
	server string
	sink   messages.Sink
	dead   bool
}

func (c *unsentConn) Send(op messages.Op) {
	if c.dead {
		c.sink(messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, NotSent: true,
			Err: messages.Errorf(messages.KindDisconnected, c.server, "connection closed")})
		return
	}
	c.p.mu.Lock()
	c.p.sent = append(c.p.sent, c.gen)
	c.p.mu.Unlock()
	c.sink(messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, Result: json.RawMessage(`{"content":[]}`)})
}
func (c *unsentConn) Cancel(messages.OpID)           {}
func (c *unsentConn) Notify(string, json.RawMessage) {}
func (c *unsentConn) Close()                         { c.sink(messages.ConnClosed{Server: c.server, Gen: c.gen}) }

func startUnsent(t *testing.T, p *unsentPort) *System {
	t.Helper()
	sys, err := Start(Config{Servers: []ServerConfig{{Name: "s", Endpoint: messages.Endpoint{Command: "x"},
		Policy: supervisor.Policy{Mode: supervisor.Lazy}}}, Dialer: p, Clock: clock.NewManual(time.Time{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sys.Close() })
	return sys
}

// TestUnsentRequestMovesToANewConnection: a request whose connection had
// ended before it was written goes out on a new connection (the server
// never saw it, so this is not a retry), exactly once.
func TestUnsentRequestMovesToANewConnection(t *testing.T) {
	t.Parallel()
	p := &unsentPort{deadUp: 2}
	sys := startUnsent(t, p)
	r := sys.Request(context.Background(), "s", "tools/call", json.RawMessage(`{"name":"x","arguments":{}}`), messages.DeadlineCall, messages.OriginModel)
	if r.Err != nil || r.Gen != 3 {
		t.Fatalf("reply %+v, want success on generation 3", r)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dials != 3 || len(p.sent) != 1 || p.sent[0] != 3 {
		t.Fatalf("dials %d, sent on %v; want 3 dials and one send on generation 3", p.dials, p.sent)
	}
}

// TestUnsentResendsAreBounded: a server whose every connection is dead on
// arrival fails the call after supervisor.MaxResends moves, instead of looping.
func TestUnsentResendsAreBounded(t *testing.T) {
	t.Parallel()
	p := &unsentPort{deadUp: 100}
	sys := startUnsent(t, p)
	r := sys.Request(context.Background(), "s", "tools/call", json.RawMessage(`{"name":"x","arguments":{}}`), messages.DeadlineCall, messages.OriginModel)
	if r.Err == nil || r.Err.Kind != messages.KindDisconnected {
		t.Fatalf("reply %+v, want disconnected", r)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dials != supervisor.MaxResends+1 || len(p.sent) != 0 {
		t.Fatalf("dials %d, sent %v; want %d dials and no send", p.dials, p.sent, supervisor.MaxResends+1)
	}
}
