package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/messages"
)

// MCPToolName is the proxy tool's name.
const MCPToolName = "mcp"

// mcpInputSchema is the proxy tool's input schema.
var mcpInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "tool": {"type": "string", "description": "Name of an MCP tool to call"},
    "args": {"description": "Arguments for the tool: a JSON object, or a JSON string holding one", "anyOf": [{"type": "object"}, {"type": "string"}]},
    "server": {"type": "string", "description": "List the tools of this MCP server"}
  },
  "additionalProperties": false
}`)

// mcpArgs is the proxy tool's input.
type mcpArgs struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Server string          `json:"server"`
}

// MCP is the `mcp` proxy tool.
type MCP struct {
	sys *actors.System
}

// NewMCP builds the proxy tool over a running actor system.
func NewMCP(sys *actors.System) *MCP { return &MCP{sys: sys} }

// Tool returns the proxy tool in registrable form.
func (m *MCP) Tool() Tool {
	return Tool{Name: MCPToolName, Description: m.description(), InputSchema: mcpInputSchema, Execute: m.Execute}
}

func (m *MCP) description() string {
	var b strings.Builder
	b.WriteString("Use MCP servers through one tool. ")
	b.WriteString(`{} shows every server's status; {"server": "name"} lists a server's tools; `)
	b.WriteString(`{"tool": "name", "args": {...}} calls a tool.`)
	if names := m.sys.Names(); len(names) > 0 {
		b.WriteString(" Servers: " + strings.Join(names, ", ") + ".")
	}
	return b.String()
}

// Execute dispatches on the arguments: tool (call) > server (list) > status.
func (m *MCP) Execute(ctx context.Context, raw json.RawMessage) Result {
	var a mcpArgs
	if len(raw) > 0 && string(raw) != "null" {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return failure(messages.Errorf(messages.KindInvalidArgs, "", "arguments must be a JSON object with optional fields tool, args and server"))
		}
	}
	switch {
	case a.Tool != "":
		return m.call(ctx, a.Tool, a.Args)
	case len(a.Args) > 0 && string(a.Args) != "null":
		return failure(messages.Errorf(messages.KindInvalidArgs, "", `args needs a tool: {"tool": "name", "args": {...}}`))
	case a.Server != "":
		return m.list(ctx, a.Server)
	}
	return m.status(ctx)
}

// failure renders an error as a tool result with its stable code.
func failure(err *messages.Error) Result {
	details := map[string]any{"error": err.Code(), "message": err.Error()}
	if err.Server != "" {
		details["server"] = err.Server
	}
	if err.RetryAfter > 0 {
		details["retryAfterSeconds"] = int((err.RetryAfter + 999_999_999) / 1_000_000_000)
	}
	if err.RPCCode != 0 {
		details["rpcCode"] = err.RPCCode
	}
	return Result{Text: "Error: " + err.Error(), Details: details, IsError: true}
}

// decodeToolArgs accepts an object, or a JSON string holding one.
func decodeToolArgs(raw json.RawMessage) (json.RawMessage, *messages.Error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, messages.Errorf(messages.KindInvalidArgs, "", "args must be a JSON object")
		}
		raw = json.RawMessage(strings.TrimSpace(s))
		if len(raw) == 0 {
			return json.RawMessage(`{}`), nil
		}
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return nil, messages.Errorf(messages.KindInvalidArgs, "", "args must be a JSON object, not %s", jsonKind(raw))
	}
	return raw, nil
}

func jsonKind(raw json.RawMessage) string {
	if !json.Valid(raw) {
		return "invalid JSON"
	}
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return fmt.Sprintf("a %s", "number")
}
