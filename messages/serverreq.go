package messages

import (
	"context"
	"encoding/json"
)

// Server-to-client request methods the runtime answers (2025-11-25).
const (
	MethodElicit     = "elicitation/create"
	MethodSample     = "sampling/createMessage"
	MethodListRoots  = "roots/list"
	MethodServerPing = "ping"
)

// JSON-RPC error codes a server request may be answered with.
const (
	// RPCMethodNotFound answers a method the client does not offer.
	RPCMethodNotFound = -32601
	// RPCInvalidParams answers malformed params (the message names the
	// field).
	RPCInvalidParams = -32602
	// RPCInternal answers a request the client could not serve, including
	// "too many pending requests".
	RPCInternal = -32603
	// RPCURLElicitationRequired is the error a server answers a call with
	// when the user must first complete a URL-mode elicitation.
	RPCURLElicitationRequired = -32042
)

// MaxPendingServerRequests is how many requests one server connection may
// have waiting for an answer at once; more are answered RPCInternal "too
// many pending requests" at once.
const MaxPendingServerRequests = 16

// ServerRequest is a request a server sent to the client: the transport
// hands it to the ServerRequestHandler on a goroutine of its own.
type ServerRequest struct {
	// Server is the configured server's name; Gen its connection
	// generation.
	Server string
	Gen    uint64
	// Method and Params are as the server sent them.
	Method string
	Params json.RawMessage
	// Caller is the caller tag (caller.go) of the call the transport ties
	// this request to; nil when it cannot tell (stdio, the GET stream).
	Caller any
}

// RPCError is a JSON-RPC error answer to a server request.
type RPCError struct {
	Code    int
	Message string
}

func (e *RPCError) Error() string { return e.Message }

// ServerRequestHandler answers server requests. It may block (a person
// answering a question); ctx ends when the server cancels the request
// (notifications/cancelled) or the connection ends, and the answer is then
// dropped. It returns the result or an error answer, never both.
type ServerRequestHandler func(ctx context.Context, r ServerRequest) (json.RawMessage, *RPCError)

// ClientNote is a server notification meant for the host rather than the
// runtime: progress of a call, a server log message, the end of a URL-mode
// elicitation. The server actor hands it to the host as it arrives.
type ClientNote struct {
	Server string
	Method string
	Params json.RawMessage
}

// UserWait tells a server actor that a request of its server waits for a
// person (Delta +1) or no longer does (Delta -1). While any does, the
// deadlines of the server's calls stand still: time spent waiting for a
// person's answer does not count toward a call's deadline.
type UserWait struct {
	Server string
	Delta  int
}

// ClientNotify asks a server actor to send a notification of the client's
// (notifications/roots/list_changed) on its live connection; without one
// it is dropped (the server learns the state when it next connects).
type ClientNotify struct {
	Method string
	Params json.RawMessage
}
