package simtests

import (
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/messages"
)

// Server is a simulated MCP server: tools answer on the simulation's
// schedule, so their replies interleave with everything else by seed.
type Server struct {
	Name     string
	Tools    []string
	FailDial bool
}

// simConn is one simulated connection.
type simConn struct {
	w      *World
	srv    *Server
	server string
	gen    uint64
	sink   messages.Sink
	closed bool
}

func (c *simConn) Send(op messages.Op) {
	c.w.Tracef("send %s gen=%d op=%d %s", c.server, c.gen, op.ID, op.Method)
	c.w.Disp.Schedule(func() {
		if c.closed {
			return
		}
		res := messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID}
		switch op.Method {
		case "tools/list":
			var tools []map[string]any
			for _, t := range c.srv.Tools {
				tools = append(tools, map[string]any{"name": t, "description": "simulated " + t, "inputSchema": map[string]any{"type": "object"}})
			}
			res.Result, _ = json.Marshal(map[string]any{"tools": tools})
		case "tools/call":
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			_ = json.Unmarshal(op.Params, &p)
			text := fmt.Sprintf("%s(%s)", p.Name, sortedKeys(p.Arguments))
			res.Result, _ = json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": text}}})
		default:
			res.Err = &messages.Error{Kind: messages.KindRPC, Server: c.server, RPCCode: -32601, Message: "method not found"}
		}
		c.w.Tracef("reply %s gen=%d op=%d", c.server, c.gen, op.ID)
		c.sink(res)
	})
}

func (c *simConn) Cancel(id messages.OpID) {
	c.w.Tracef("cancel %s gen=%d op=%d", c.server, c.gen, id)
}

func (c *simConn) Notify(method string, _ json.RawMessage) {
	c.w.Tracef("notify %s gen=%d %s", c.server, c.gen, method)
}

func (c *simConn) Close() {
	c.w.Tracef("close %s gen=%d", c.server, c.gen)
	c.w.Disp.Schedule(func() {
		c.closed = true
		c.sink(messages.ConnClosed{Server: c.server, Gen: c.gen})
	})
}
