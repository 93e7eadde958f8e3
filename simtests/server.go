package simtests

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// Server is one simulated MCP server: its configuration as the runtime
// sees it, how it behaves, and the faults armed on it. Each dial the
// runtime makes to it becomes a link (and, when it succeeds, a simConn).
type Server struct {
	Name      string
	Tools     []string
	Lifecycle string         // "" (lazy), eager, keep-alive, lazy-keep-alive
	Idle      *time.Duration // idleTimeout; nil leaves the runtime's default
	// Startup, Call and Catalog are the deadlines (0: the runtime's defaults).
	Startup, Call, Catalog time.Duration
	PageSize               int           // tools per tools/list page; 0: all on one
	Latency                time.Duration // how long a reply takes
	DialLatency            time.Duration // how long a dial (spawn and handshake) takes
	ExitDelay              time.Duration // from a crash to its ConnClosed
	ReapDelay              time.Duration // from Close to its ConnClosed (the process exiting)
	Disabled               bool
	// The events server (events_server.go): the event types it offers,
	// how many events of each it retains for replay (0: defaultRetain),
	// and its heartbeat interval (0: defaultHeartbeat; negative: none).
	topics    []*evTopic
	Retain    int
	Heartbeat time.Duration
	evFlap    int  // the next evFlap events streams end right after their acknowledgement
	evFlapGap bool // and each acknowledgement is followed by active {truncated: true} first

	faults []*fault // armed by scenario commands, used in order
	chaos  *chaos   // faults drawn from the seed (campaign); nil: none

	w        *World
	links    []*link // every dial, oldest first
	notified int     // notifications sent outside streams (notify)
}

// config renders the server as configuration.
func (s *Server) config() config.Server {
	c := config.Server{Command: "sim-" + s.Name, Lifecycle: s.Lifecycle, Disabled: s.Disabled}
	if s.Idle != nil {
		minutes := s.Idle.Minutes()
		c.IdleTimeout = &minutes
	}
	ms := func(d time.Duration) *int64 {
		if d <= 0 {
			return nil
		}
		v := d.Milliseconds()
		return &v
	}
	c.StartupTimeoutMs, c.RequestTimeoutMs, c.CatalogTimeoutMs = ms(s.Startup), ms(s.Call), ms(s.Catalog)
	return c
}

// keepsAlive reports whether the runtime reconnects this server by itself.
func (s *Server) keepsAlive() bool {
	return s.Lifecycle == "keep-alive" || s.Lifecycle == "lazy-keep-alive"
}

// liveConns returns the server's connections that are up, oldest first.
func (s *Server) liveConns() []*simConn {
	var out []*simConn
	for _, l := range s.links {
		if l.conn != nil && l.conn.state == connLive {
			out = append(out, l.conn)
		}
	}
	return out
}

// outstanding counts requests received and not yet answered, on every
// connection.
func (s *Server) outstanding() int {
	n := 0
	for _, l := range s.links {
		if l.conn != nil {
			n += len(l.conn.pending)
		}
	}
	return n
}

// Crash makes every live connection's process exit now.
func (s *Server) Crash(why string) int {
	conns := s.liveConns()
	for _, c := range conns {
		c.crash(why)
	}
	return len(conns)
}

// handle computes the answer to a request the server received: a result,
// or a JSON-RPC error.
func (s *Server) handle(op messages.Op, toolError bool) (json.RawMessage, *messages.Error) {
	switch op.Method {
	case "tools/list":
		return s.listPage(op.Params)
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(op.Params, &p)
		if !s.hasTool(p.Name) {
			return nil, &messages.Error{Kind: messages.KindRPC, Server: s.Name, RPCCode: -32602, Message: "unknown tool " + strconv.Quote(p.Name) + " (JSON-RPC error -32602)"}
		}
		text := fmt.Sprintf("%s ok %s", p.Name, p.Arguments)
		if toolError {
			text = fmt.Sprintf("%s failed %s", p.Name, p.Arguments)
		}
		res, _ := json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": text}}, "isError": toolError})
		return res, nil
	case "events/list":
		return s.eventsList()
	case "sim/echo":
		res, _ := json.Marshal(map[string]json.RawMessage{"echo": op.Params})
		return res, nil
	}
	return nil, &messages.Error{Kind: messages.KindRPC, Server: s.Name, RPCCode: -32601, Message: "method not found (JSON-RPC error -32601)"}
}

func (s *Server) hasTool(name string) bool {
	for _, t := range s.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// listPage answers one tools/list page; cursors are "p<index>".
func (s *Server) listPage(params json.RawMessage) (json.RawMessage, *messages.Error) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	from := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(p.Cursor, "p"))
		if err != nil || n < 0 || n > len(s.Tools) {
			return nil, &messages.Error{Kind: messages.KindRPC, Server: s.Name, RPCCode: -32602, Message: "invalid cursor (JSON-RPC error -32602)"}
		}
		from = n
	}
	to := len(s.Tools)
	if s.PageSize > 0 && from+s.PageSize < to {
		to = from + s.PageSize
	}
	tools := []map[string]any{}
	for _, t := range s.Tools[from:to] {
		tools = append(tools, map[string]any{"name": t, "description": "simulated " + t, "inputSchema": map[string]any{"type": "object"}})
	}
	page := map[string]any{"tools": tools}
	if to < len(s.Tools) {
		page["nextCursor"] = "p" + strconv.Itoa(to)
	}
	res, _ := json.Marshal(page)
	return res, nil
}

// describeResult renders a tools/list or tools/call result for the trace.
func describeResult(method string, raw json.RawMessage) string {
	switch method {
	case "tools/list":
		var p struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		_ = json.Unmarshal(raw, &p)
		names := make([]string, len(p.Tools))
		for i, t := range p.Tools {
			names[i] = t.Name
		}
		out := "tools=[" + strings.Join(names, " ") + "]"
		if p.NextCursor != "" {
			out += " next=" + p.NextCursor
		}
		return out
	case "events/list":
		var p struct {
			Events []struct {
				Name     string   `json:"name"`
				Delivery []string `json:"delivery"`
			} `json:"events"`
		}
		_ = json.Unmarshal(raw, &p)
		var names []string
		for _, e := range p.Events {
			names = append(names, e.Name+":"+strings.Join(e.Delivery, "+"))
		}
		return "events=[" + strings.Join(names, " ") + "]"
	case "tools/call":
		var p struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(raw, &p)
		var texts []string
		for _, c := range p.Content {
			texts = append(texts, c.Text)
		}
		out := strconv.Quote(strings.Join(texts, " "))
		if p.IsError {
			out += " isError"
		}
		return out
	}
	return string(raw)
}

// describeOp renders a request for the trace.
func describeOp(op messages.Op) string {
	switch op.Method {
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(op.Params, &p)
		return fmt.Sprintf("tools/call %s %s", p.Name, p.Arguments)
	case "tools/list":
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(op.Params, &p)
		if p.Cursor != "" {
			return "tools/list cursor=" + p.Cursor
		}
	}
	if strings.HasPrefix(op.Method, "sim/") {
		return op.Method + " " + string(op.Params)
	}
	if op.Method == "events/stream" {
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Cursor    json.RawMessage `json:"cursor"`
			MaxAgeMs  json.RawMessage `json:"maxAgeMs"`
		}
		_ = json.Unmarshal(op.Params, &p)
		out := fmt.Sprintf("events/stream %s %s cursor=%s", p.Name, p.Arguments, p.Cursor)
		if len(p.MaxAgeMs) > 0 {
			out += " maxAgeMs=" + string(p.MaxAgeMs)
		}
		return out
	}
	return op.Method
}

// describeErr renders a port error for the trace.
func describeErr(e *messages.Error) string {
	if e == nil {
		return "<nil>"
	}
	out := e.Code()
	if e.RPCCode != 0 {
		out += " " + strconv.Itoa(e.RPCCode)
	}
	return out + " " + strconv.Quote(e.Message)
}
