package bench

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
)

// instantDialer is a connection port whose server answers every request at
// once, on the caller's goroutine: what remains of a call's cost is the
// runtime's own work (argument parsing, name resolution, the actor turns,
// leases, the deadline timer, result rendering).
type instantDialer struct{}

func (instantDialer) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	sink(messages.DialResult{Server: req.Server, Gen: req.Gen, Conn: &instantConn{server: req.Server, gen: req.Gen, sink: sink},
		Info: messages.ServerInfo{Transport: messages.TransportStdio, ProtocolVersion: messages.Protocol20251125}})
	return noDial{}
}

type noDial struct{}

func (noDial) Cancel() {}

type instantConn struct {
	server string
	gen    uint64
	sink   messages.Sink
}

var (
	toolsList = json.RawMessage(`{"tools":[{"name":"echo","description":"Echo","inputSchema":{"type":"object"}}]}`)
	echoReply = json.RawMessage(`{"content":[{"type":"text","text":"echo: benchmark"}]}`)
)

func (c *instantConn) Send(op messages.Op) {
	res := messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, Result: echoReply}
	if op.Method == "tools/list" {
		res.Result = toolsList
	}
	c.sink(res)
}
func (c *instantConn) Cancel(messages.OpID)           {}
func (c *instantConn) Notify(string, json.RawMessage) {}
func (c *instantConn) Close()                         { c.sink(messages.ConnClosed{Server: c.server, Gen: c.gen}) }

// BenchmarkRuntimeOverhead is the runtime's own CPU per tool call through
// the mcp tool, with I/O taken out: go test ./internal/bench -run '^$' -bench RuntimeOverhead -benchmem
func BenchmarkRuntimeOverhead(b *testing.B) {
	rt, err := mcprt.Start(context.Background(), mcprt.Options{
		Config: &config.File{MCPServers: map[string]config.Server{"bench": {Command: "unused"}}},
		Sim:    &simseam.Seams{Dialer: instantDialer{}},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	tool, _ := rt.Tool(mcprt.MCPToolName)
	args := json.RawMessage(`{"tool":"echo","args":{"message":"benchmark"}}`)
	if r := tool.Execute(context.Background(), args); r.IsError || r.Text != "echo: benchmark" {
		b.Fatalf("warm-up call: %+v", r)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := tool.Execute(ctx, args); r.IsError {
			b.Fatal(r.Text)
		}
	}
}

// instantTransport is an mcp-go transport whose server answers at once.
type instantTransport struct{}

func (instantTransport) Start(context.Context) error { return nil }
func (instantTransport) SendRequest(_ context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	switch req.Method {
	case "initialize":
		return &transport.JSONRPCResponse{JSONRPC: "2.0", ID: req.ID, Result: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"i","version":"1"}}`)}, nil
	case "tools/list":
		return &transport.JSONRPCResponse{JSONRPC: "2.0", ID: req.ID, Result: toolsList}, nil
	}
	return &transport.JSONRPCResponse{JSONRPC: "2.0", ID: req.ID, Result: echoReply}, nil
}
func (instantTransport) SendNotification(context.Context, mcp.JSONRPCNotification) error { return nil }
func (instantTransport) SetNotificationHandler(func(mcp.JSONRPCNotification))            {}
func (instantTransport) Close() error                                                    { return nil }
func (instantTransport) GetSessionId() string                                            { return "" }

// BenchmarkBareOverhead is a bare mcp-go client's own CPU per tool call
// with I/O taken out, the reference for BenchmarkRuntimeOverhead.
func BenchmarkBareOverhead(b *testing.B) {
	call := bareClient(b, instantTransport{})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
