package remote

import (
	"context"
	"encoding/json"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// The operations a session may ask for, each answered from the shared
// runtime's embedding API. Every operation names a tool, a server or
// nothing; none carries a command, a URL or configuration, so a session
// can only use what the serving configuration already names.
const (
	opTools          = "tools"          // the agent-facing tool definitions
	opTool           = "tool"           // execute one agent-facing tool
	opCallTool       = "callTool"       // the typed API's CallTool
	opServers        = "servers"        // configured server names
	opStatus         = "status"         // the host's status snapshot
	opServerStatuses = "serverStatuses" // detailed server statuses
	opConnect        = "connect"        // connect (or reconnect) a server
	opServerTools    = "serverTools"    // a server's catalog tools
)

const eventsTool = mcprt.EventsToolName

// toolDef is an agent-facing tool's definition on the wire.
type toolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// callToolArgs are opCallTool's arguments.
type callToolArgs struct {
	Server    string         `json:"server"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

// connectArgs are opConnect's arguments.
type connectArgs struct {
	Server string `json:"server"`
	Fresh  bool   `json:"fresh"`
}

// execute runs one request against the shared runtime, or forwards it to
// the peer running the server it names (peers.go; never a request of
// another member). sub is the subscription an mcp_events subscribe made,
// so the session owns it.
func (s *Server) execute(ctx context.Context, m *requestMsg, fromMember bool) (result json.RawMessage, sub string, err error) {
	if !fromMember {
		if b, sub, handled, err := s.forward(ctx, m); handled {
			return b, sub, err
		}
	} else {
		ctx = forwarded(ctx) // peers_catalog.go
	}
	rt := s.rt
	var out any
	switch m.Op {
	case opTools:
		defs := []toolDef{}
		for _, t := range rt.Tools() {
			defs = append(defs, toolDef{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
		out = defs
	case opTool:
		t, ok := rt.Tool(m.Name)
		if !ok {
			return nil, "", messages.Errorf(messages.KindToolNotFound, "", "no agent-facing tool named %q", m.Name)
		}
		args := m.Args
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		res := t.Execute(ctx, args)
		if m.Name == eventsTool && !res.IsError {
			sub = subscribed(res)
		}
		if b, ok := appendResult(make([]byte, 0, resultRoom(res)), res); ok {
			return b, sub, nil
		}
		out = res
	case opCallTool:
		a, err := opArgs[callToolArgs](m)
		if err != nil {
			return nil, "", err
		}
		res, err := rt.CallTool(ctx, a.Server, a.Tool, a.Arguments)
		if err != nil {
			return nil, "", err
		}
		out = res
	case opServers:
		out = rt.Servers()
	case opStatus:
		out = rt.Status()
	case opServerStatuses:
		out = rt.ServerStatuses()
	case opConnect:
		a, err := opArgs[connectArgs](m)
		if err != nil {
			return nil, "", err
		}
		info, err := rt.Connect(ctx, a.Server, a.Fresh)
		if err != nil {
			return nil, "", err
		}
		out = info
	case opServerTools:
		tools, ok := rt.ServerTools(m.Name)
		if !ok {
			return nil, "", messages.Errorf(messages.KindInvalidArgs, m.Name, "the tools of %q are not listed yet (connect it first)", m.Name)
		}
		out = tools
	default:
		if b, ok, err := s.executeProtocol(ctx, m, fromMember); ok { // ops_protocol.go
			return b, "", err
		}
		res, ok, err := executeCatalog(ctx, rt, m)
		if !ok {
			res, ok, err = s.executePeerCatalog(ctx, m) // peers_catalog.go
		}
		if !ok {
			res, ok, err = s.executeParity(ctx, m, fromMember) // ops_parity.go
		}
		if !ok {
			return nil, "", messages.Errorf(messages.KindInvalidArgs, "", "unknown operation %q", m.Op)
		}
		if err != nil {
			return nil, "", err
		}
		out = res
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, "", messages.Errorf(messages.KindInternal, "", "encoding the %s result: %s", m.Op, err)
	}
	return b, sub, nil
}

// subscribed returns the subscription id a successful subscribe result
// names ("" for the other actions).
func subscribed(res mcprt.Result) string {
	var v struct {
		Subscription struct {
			ID string `json:"id"`
		} `json:"subscription"`
	}
	if json.Unmarshal([]byte(res.Text), &v) != nil {
		return ""
	}
	return v.Subscription.ID
}

// opArgs decodes m's arguments; the error names the operation.
func opArgs[T any](m *requestMsg) (T, error) {
	var a T
	if err := json.Unmarshal(m.Args, &a); err != nil {
		return a, messages.Errorf(messages.KindInvalidArgs, "", "%s arguments: %s", m.Op, err)
	}
	return a, nil
}
