package mcpline

import (
	"encoding/json"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// ErrorReply is a JSON-RPC error response that keeps the request id exactly
// as the peer spelled it.
type ErrorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   errorDetails    `json:"error"`
}

type errorDetails struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// NewErrorReply builds a JSON-RPC error response for id (null when empty).
func NewErrorReply(id json.RawMessage, code int, message string) ErrorReply {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return ErrorReply{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Error: errorDetails{Code: code, Message: message}}
}

// IsNull reports whether a raw JSON-RPC id is absent or null.
func IsNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// idKey normalises a JSON-RPC id so that a request and the requestId of its
// cancellation compare equal.
func idKey(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "raw:" + string(raw)
	}
	switch x := v.(type) {
	case string:
		return "s:" + x
	case float64:
		return "n:" + strconv.FormatFloat(x, 'g', -1, 64)
	}
	return "raw:" + string(raw)
}
