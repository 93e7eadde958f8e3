package transports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/jsonscan"
)

// rpcRequest is one JSON-RPC request the client sends. Our ids are always
// strings (idSource), so the id is kept as one.
type rpcRequest struct {
	ID     string
	Method string
	// Params is sent as it is (compacted); nil or empty sends none.
	Params json.RawMessage
	// Header holds extra HTTP headers (2026-07-28's Mcp-Method and
	// Mcp-Name); ignored on stdio and sockets.
	Header http.Header
}

// rpcResponse is one JSON-RPC response, its members as received.
type rpcResponse struct {
	ID     json.RawMessage // raw; absent or null for an error to an unreadable request
	Result json.RawMessage
	Error  *mcp.JSONRPCErrorDetails
}

// idIs reports whether the response's id is the string id.
func (r *rpcResponse) idIs(id string) bool {
	if n := len(r.ID); n == len(id)+2 && r.ID[0] == '"' && r.ID[n-1] == '"' && string(r.ID[1:n-1]) == id {
		return true // as written, without escapes: the common case
	}
	s, ok := idString(r.ID)
	return ok && s == id
}

// idNull reports whether the response has no id (absent or null).
func (r *rpcResponse) idNull() bool {
	return len(r.ID) == 0 || string(bytes.TrimSpace(r.ID)) == "null"
}

// rpcTransport is what a connection drives: the line codec (stdio and
// sockets), Streamable HTTP and legacy HTTP+SSE. Server notifications,
// server requests and the end of the transport reach the connection
// through callbacks each transport is built with.
type rpcTransport interface {
	// Start makes the transport ready for requests (the legacy SSE client
	// opens its GET stream and waits for the endpoint event).
	Start(ctx context.Context) error
	// SendRequest sends req and waits for its response, the context's
	// end, or the transport's.
	SendRequest(ctx context.Context, req rpcRequest) (*rpcResponse, error)
	// SendNotification sends a notification; params nil or empty sends
	// none.
	SendNotification(ctx context.Context, method string, params json.RawMessage) error
	// Close ends the transport; requests in flight fail.
	Close() error
	// SessionID is Streamable HTTP's Mcp-Session-Id ("" elsewhere).
	SessionID() string
}

// versioned is implemented by the HTTP transports: every request after the
// handshake carries the negotiated version in MCP-Protocol-Version.
type versioned interface {
	setProtocolVersion(v string)
}

// HTTP header names of Streamable HTTP.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
)

// Errors of the HTTP transports, in place of the library sentinels the
// classification used to match.
var (
	// errSessionLost: a POST carrying Mcp-Session-Id was answered 404
	// (the server no longer knows the session), or the session already
	// ended so.
	errSessionLost = errors.New("transports: the server lost the session (HTTP 404)")
	// errLegacyServer: initialize was refused with a 4xx, as a server
	// that speaks only legacy HTTP+SSE does.
	errLegacyServer = errors.New("transports: initialize refused with HTTP 4xx (a legacy HTTP+SSE server?)")
	// errUnauthorized: the server answered 401 (what the authorization
	// hook could not settle).
	errUnauthorized = errors.New("transports: unauthorized (HTTP 401)")
	// errTransportClosed: the transport was closed.
	errTransportClosed = errors.New("transports: transport closed")
)

// httpStatusError is a request answered with an unexpected HTTP status.
type httpStatusError struct {
	what   string // "request", "notification", "resumed stream", ...
	status int
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("transports: %s answered with HTTP status %d", e.what, e.status)
}

// appendRequest appends req's JSON-RPC encoding to b. The params are
// compacted (a line must hold one message) and checked on the way.
func appendRequest(b []byte, req rpcRequest) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = jsonscan.AppendMarshalString(b, req.ID)
	b = append(b, `,"method":`...)
	b = jsonscan.AppendMarshalString(b, req.Method)
	return appendParams(b, req.Params)
}

// appendNotification appends a notification's JSON-RPC encoding to b.
func appendNotification(b []byte, method string, params json.RawMessage) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = jsonscan.AppendMarshalString(b, method)
	return appendParams(b, params)
}

func appendParams(b []byte, params json.RawMessage) ([]byte, error) {
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, params); err != nil {
			return nil, fmt.Errorf("transports: params are not JSON: %w", err)
		}
		b = buf.Bytes()
	}
	return append(b, '}'), nil
}
