package eventsrv

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// The methods of the events protocol (namespace "events").
const (
	MethodList   = "events/list"
	MethodStream = "events/stream"

	NoteActive      = "notifications/events/active"
	NoteEvent       = "notifications/events/event"
	NoteHeartbeat   = "notifications/events/heartbeat"
	NoteError       = "notifications/events/error"
	NoteTerminated  = "notifications/events/terminated"
	NoteListChanged = "notifications/events/list_changed"
)

// The delivery modes an event type may offer; a Server serves only push.
const (
	DeliveryPush    = "push"
	DeliveryPoll    = "poll"
	DeliveryWebhook = "webhook"
)

// The error codes of the events proposal (JSON-RPC server range), next to
// the standard -32602 invalid params.
const (
	CodeInvalidParams     = mcp.INVALID_PARAMS
	CodeNotFound          = -32011
	CodeForbidden         = -32012
	CodeResourceExhausted = -32013
	CodeUnsupported       = -32014
)

// Descriptor is one entry of the events/list result.
type Descriptor struct {
	Name          string         `json:"name"`
	Description   string         `json:"description,omitempty"`
	Delivery      []string       `json:"delivery"`
	InputSchema   map[string]any `json:"inputSchema"`
	PayloadSchema map[string]any `json:"payloadSchema,omitempty"`
}

// listResult is the events/list result.
type listResult struct {
	Events     []Descriptor `json:"events"`
	NextCursor string       `json:"nextCursor,omitempty"`
	ResultType string       `json:"resultType,omitempty"`
}

// resultType is what a result carries in its resultType member: "complete"
// for a request of the 2026-07-28 generation (its params._meta names the
// protocol version), as mcp-go's own results do, and nothing otherwise.
func resultType(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var v string
	if json.Unmarshal(params, &p) == nil && json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v) == nil && mcp.IsModernProtocol(v) {
		return string(mcp.ResultTypeComplete)
	}
	return ""
}

// StreamParams are events/stream's params as the server reads them.
type StreamParams struct {
	Name string
	// Arguments is the arguments object ({} when absent or null).
	Arguments json.RawMessage
	// Cursor is nil for "from now".
	Cursor *string
	// MaxAgeMs is nil when absent.
	MaxAgeMs *int64
}

// decodeStreamParams checks events/stream's params: name a non-empty
// string, arguments an object (or absent, or null), cursor a string or
// null, maxAgeMs an integer ≥ 0. Everything else is ignored (the 2026-07-28
// envelope rides in _meta).
func decodeStreamParams(raw json.RawMessage) (StreamParams, *mcpline.Error) {
	var p struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Cursor    json.RawMessage `json:"cursor"`
		MaxAgeMs  json.RawMessage `json:"maxAgeMs"`
	}
	var out StreamParams
	if isNull(raw) || json.Unmarshal(raw, &p) != nil {
		return out, invalid("events/stream params must be an object")
	}
	if json.Unmarshal(p.Name, &out.Name) != nil || out.Name == "" {
		return out, invalid("events/stream: name must be a non-empty string")
	}
	out.Arguments = json.RawMessage(`{}`)
	if !isNull(p.Arguments) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(p.Arguments, &obj) != nil || obj == nil {
			return out, invalid("events/stream: arguments must be an object")
		}
		out.Arguments = p.Arguments
	}
	if !isNull(p.Cursor) {
		var c string
		if json.Unmarshal(p.Cursor, &c) != nil {
			return out, invalid("events/stream: cursor must be a string or null")
		}
		out.Cursor = &c
	}
	if !isNull(p.MaxAgeMs) {
		dec := json.NewDecoder(bytes.NewReader(p.MaxAgeMs))
		dec.UseNumber()
		var num json.Number
		if dec.Decode(&num) != nil {
			return out, invalid("events/stream: maxAgeMs must be an integer")
		}
		n, err := num.Int64()
		if err != nil || n < 0 {
			return out, invalid("events/stream: maxAgeMs must be an integer ≥ 0")
		}
		out.MaxAgeMs = &n
	}
	return out, nil
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

func invalid(format string, args ...any) *mcpline.Error {
	return &mcpline.Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// eventFrame is the params of notifications/events/event.
type eventFrame struct {
	EventID   string          `json:"eventId"`
	Name      string          `json:"name"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
	Cursor    string          `json:"cursor"`
}

// activeFrame is the params of notifications/events/active.
type activeFrame struct {
	Cursor    *string `json:"cursor"`
	Truncated bool    `json:"truncated,omitempty"`
}

// cursorFrame is the params of notifications/events/heartbeat.
type cursorFrame struct {
	Cursor string `json:"cursor"`
}

// ErrorObject is a JSON-RPC error object as notifications/events/error and
// notifications/events/terminated carry it.
type ErrorObject struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// errorFrame is the params of notifications/events/error and
// notifications/events/terminated.
type errorFrame struct {
	Error ErrorObject `json:"error"`
}
