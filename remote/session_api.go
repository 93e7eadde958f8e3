package remote

import (
	"context"
	"encoding/json"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// The host-facing API of an attached session: the same names and types
// as mcprt.Runtime's, answered by the shared runtime.

// Tools returns the agent-facing tools as the shared runtime has them
// now; each executes on the shared runtime, and cancelling its context
// cancels the call there. An unreachable member gives no tools.
func (s *Session) Tools() []mcprt.Tool {
	b, err := s.request(context.Background(), opTools, "", nil)
	if err != nil {
		return nil
	}
	var defs []toolDef
	if json.Unmarshal(b, &defs) != nil {
		return nil
	}
	out := make([]mcprt.Tool, 0, len(defs))
	for _, d := range defs {
		out = append(out, s.tool(d))
	}
	return out
}

// Tool returns the agent-facing tool with the given name.
func (s *Session) Tool(name string) (mcprt.Tool, bool) {
	for _, t := range s.Tools() {
		if t.Name == name {
			return t, true
		}
	}
	return mcprt.Tool{}, false
}

func (s *Session) tool(d toolDef) mcprt.Tool {
	name := d.Name
	return mcprt.Tool{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema,
		Execute: func(ctx context.Context, args json.RawMessage) mcprt.Result {
			return renderedResult(s.request(ctx, opTool, name, args))
		}}
}

// failure renders an error as a tool result with its stable code, as the
// runtime's own tools do.
func failure(err *messages.Error) mcprt.Result {
	details := map[string]any{"error": err.Code(), "message": err.Error()}
	if err.Server != "" {
		details["server"] = err.Server
	}
	return mcprt.Result{Text: "Error: " + err.Error(), Details: details, IsError: true}
}

// get runs an operation and decodes its result into v.
func (s *Session) get(ctx context.Context, op, name string, args any, v any) error {
	var raw []byte
	if args != nil {
		var err error
		if raw, err = json.Marshal(args); err != nil {
			return messages.Errorf(messages.KindInvalidArgs, "", "arguments: %s", err)
		}
	}
	b, err := s.request(ctx, op, name, raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return messages.Errorf(messages.KindInternal, "", "the shared runtime's %s result is malformed: %s", op, err)
	}
	return nil
}

// Servers returns the configured server names in configuration order
// (nil when the member cannot be reached).
func (s *Session) Servers() []string {
	var out []string
	_ = s.get(context.Background(), opServers, "", nil, &out)
	return out
}

// Status returns the shared runtime's status snapshot.
func (s *Session) Status() mcprt.StatusSnapshot {
	var out mcprt.StatusSnapshot
	_ = s.get(context.Background(), opStatus, "", nil, &out)
	return out
}

// ServerStatuses returns every server's detailed status on the member.
func (s *Session) ServerStatuses() []messages.ServerStatus {
	var out []messages.ServerStatus
	_ = s.get(context.Background(), opServerStatuses, "", nil, &out)
	return out
}

// CallTool calls a server's tool (see mcprt.Runtime.CallTool).
func (s *Session) CallTool(ctx context.Context, server, tool string, args any) (*mcprt.CallResult, error) {
	var a callToolArgs
	a.Server, a.Tool = server, tool
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, messages.Errorf(messages.KindInvalidArgs, server, "arguments: %s", err)
		}
		if err := json.Unmarshal(b, &a.Arguments); err != nil {
			return nil, messages.Errorf(messages.KindInvalidArgs, server, "arguments must be a JSON object")
		}
	}
	var out mcprt.CallResult
	if err := s.get(ctx, opCallTool, "", a, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Connect connects (or, with fresh, reconnects) a server on the member.
func (s *Session) Connect(ctx context.Context, server string, fresh bool) (messages.ServerInfo, error) {
	var out messages.ServerInfo
	err := s.get(ctx, opConnect, "", connectArgs{Server: server, Fresh: fresh}, &out)
	return out, err
}

// ServerTools returns a server's tools as the shared catalog knows them.
func (s *Session) ServerTools(server string) ([]mcprt.ToolInfo, bool) {
	var out []mcprt.ToolInfo
	if err := s.get(context.Background(), opServerTools, server, nil, &out); err != nil {
		return nil, false
	}
	return out, true
}

// Addr is the member's address.
func (s *Session) Addr() string { return s.addr }
