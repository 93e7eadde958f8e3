package mcpline

import (
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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

// lineSession is the mcp-go client session of one line connection.
type lineSession struct {
	id          string
	conn        *conn // its connection: requests to the peer go through it
	ch          chan mcp.JSONRPCNotification
	initialized atomic.Bool

	mu   sync.Mutex
	info mcp.Implementation     // guarded by mu
	caps mcp.ClientCapabilities // guarded by mu
}

var _ server.SessionWithClientInfo = (*lineSession)(nil)

// SessionID returns the session's identifier.
func (s *lineSession) SessionID() string { return s.id }

// NotificationChannel returns the channel the pump drains to the peer.
func (s *lineSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.ch }

// Initialize marks the session ready for notifications.
func (s *lineSession) Initialize() { s.initialized.Store(true) }

// Initialized reports whether Initialize has been called.
func (s *lineSession) Initialized() bool { return s.initialized.Load() }

// GetClientInfo returns the client identity recorded at initialization.
func (s *lineSession) GetClientInfo() mcp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// SetClientInfo records the client identity.
func (s *lineSession) SetClientInfo(info mcp.Implementation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info = info
}

// GetClientCapabilities returns the client capabilities recorded at
// initialization.
func (s *lineSession) GetClientCapabilities() mcp.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// SetClientCapabilities records the client capabilities.
func (s *lineSession) SetClientCapabilities(caps mcp.ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = caps
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
