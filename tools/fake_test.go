package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// fakeServer is an in-process MCP server behind the connection port: it
// answers list methods from its fields and tools/call from call.
type fakeServer struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	tools        []string // tools/list items
	resources    []string
	templates    []string
	prompts      []string
	instructions string
	call         func(name string, args json.RawMessage) (json.RawMessage, *messages.Error)
	read         func(uri string) json.RawMessage
	pageSize     int // tools/list pages (0: one page)
	sent         map[string]int
	dials        int
	conn         *fakeConn
}

func (f *fakeServer) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if method == "" {
		return f.dials
	}
	return f.sent[method]
}

// notify sends a notification on the live connection.
func (f *fakeServer) notify(method string) {
	f.mu.Lock()
	c := f.conn
	f.mu.Unlock()
	c.sink(messages.ConnNotification{Server: c.server, Gen: c.gen, Method: method})
}

type fakeDialer struct{ servers map[string]*fakeServer }

type noCancel struct{}

func (noCancel) Cancel() {}

func (d *fakeDialer) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	f := d.servers[req.Server]
	f.mu.Lock()
	f.dials++
	c := &fakeConn{f: f, server: req.Server, gen: req.Gen, sink: sink}
	f.conn = c
	caps := `{"tools":{"listChanged":true}`
	if f.resources != nil || f.templates != nil {
		caps += `,"resources":{}`
	}
	if f.prompts != nil {
		caps += `,"prompts":{}`
	}
	info := messages.ServerInfo{Transport: messages.TransportStdio, ProtocolVersion: messages.Protocol20251125, Instructions: f.instructions, Capabilities: json.RawMessage(caps + "}")}
	f.mu.Unlock()
	sink(messages.DialResult{Server: req.Server, Gen: req.Gen, Conn: c, Info: info})
	return noCancel{}
}

type fakeConn struct {
	f      *fakeServer
	server string
	gen    uint64
	sink   messages.Sink
}

func list(field string, items []string) json.RawMessage {
	return json.RawMessage(`{"` + field + `":[` + strings.Join(items, ",") + `]}`)
}

func (c *fakeConn) Send(op messages.Op) {
	f := c.f
	f.mu.Lock()
	if f.sent == nil {
		f.sent = map[string]int{}
	}
	f.sent[op.Method]++
	res := messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID}
	switch op.Method {
	case "tools/list":
		res.Result = list("tools", f.tools)
		if f.pageSize > 0 {
			var p struct{ Cursor string }
			json.Unmarshal(op.Params, &p)
			from := 0
			fmt.Sscanf(p.Cursor, "c%d", &from)
			to := min(from+f.pageSize, len(f.tools))
			res.Result = list("tools", f.tools[from:to])
			if to < len(f.tools) {
				res.Result = json.RawMessage(fmt.Sprintf(`{"tools":[%s],"nextCursor":"c%d"}`, strings.Join(f.tools[from:to], ","), to))
			}
		}
	case "resources/list":
		res.Result = list("resources", f.resources)
	case "resources/templates/list":
		res.Result = list("resourceTemplates", f.templates)
	case "prompts/list":
		res.Result = list("prompts", f.prompts)
	case "resources/read":
		var p struct{ URI string }
		json.Unmarshal(op.Params, &p)
		res.Result = f.read(p.URI)
	case "tools/call":
		var p struct {
			Name      string
			Arguments json.RawMessage
		}
		json.Unmarshal(op.Params, &p)
		call := f.call
		f.mu.Unlock()
		res.Result, res.Err = call(p.Name, p.Arguments)
		c.sink(res)
		return
	case "prompts/get":
		res.Result = json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hello ` + string(op.Params) + `"}}]}`)
	default:
		res.Err = &messages.Error{Kind: messages.KindRPC, Server: c.server, Message: "method not found", RPCCode: -32601}
	}
	f.mu.Unlock()
	c.sink(res)
}

func (c *fakeConn) Cancel(messages.OpID)           {}
func (c *fakeConn) Notify(string, json.RawMessage) {}
func (c *fakeConn) Close()                         { c.sink(messages.ConnClosed{Server: c.server, Gen: c.gen}) }

// tool renders a tools/list item.
func tool(name, desc string, schema ...string) string {
	s := `{"type":"object","properties":{"message":{"type":"string","description":"What to say"}},"required":["message"]}`
	if len(schema) > 0 {
		s = schema[0]
	}
	b, _ := json.Marshal(desc)
	return fmt.Sprintf(`{"name":%q,"description":%s,"inputSchema":%s}`, name, b, s)
}

// fakeRig is the tools over actors over fake servers.
type fakeRig struct {
	t   *testing.T
	ctx context.Context
	sys *actors.System
	m   *MCP
	fs  map[string]*fakeServer
}

func echoCall(name string, args json.RawMessage) (json.RawMessage, *messages.Error) {
	b, _ := json.Marshal(name + " " + string(args))
	return json.RawMessage(`{"content":[{"type":"text","text":` + string(b) + `}]}`), nil
}

// newFakeRig starts servers (configured as cfgs, in order) over fake
// servers; cache, when set, is the cache file.
func newFakeRig(t *testing.T, fs map[string]*fakeServer, cfgs []config.Server, set config.Settings, cache string) *fakeRig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	var scs []actors.ServerConfig
	for _, c := range cfgs {
		if fs[c.Name].call == nil {
			fs[c.Name].call = echoCall
		}
		sc := actors.ServerConfig{Name: c.Name, ListOnConnect: true}
		sc.Policy.Disabled = c.Disabled
		if cache != "" {
			sc.CacheKey = "key-" + c.Name
		}
		scs = append(scs, sc)
	}
	sys, err := actors.Start(actors.Config{Servers: scs, Clock: clock.NewManual(clock.Epoch), Rand: clock.NewSeededRand(1), Dialer: &fakeDialer{servers: fs}, CachePath: cache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sys.Close() })
	return &fakeRig{t: t, ctx: ctx, sys: sys, m: NewMCP(sys, Options{Servers: cfgs, Settings: set, ResultDir: t.TempDir()}), fs: fs}
}

func (r *fakeRig) exec(args string) Result { return r.m.Execute(r.ctx, json.RawMessage(args)) }
