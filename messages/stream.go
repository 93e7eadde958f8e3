package messages

import "encoding/json"

// Streams are long-lived requests of protocol extensions (for example
// events/stream): the server answers with notifications correlated to the
// request by params._meta["io.modelcontextprotocol/subscriptionId"], equal
// to the request's JSON-RPC id, and ends the stream with a final result or
// error (or by sending notifications/cancelled for it).

// SubscriptionIDKey is the _meta key that correlates a notification with
// the stream request it belongs to.
const SubscriptionIDKey = "io.modelcontextprotocol/subscriptionId"

// StreamSpec turns an Op into a stream.
type StreamSpec struct {
	// Methods are the notification methods that belong to the stream when
	// they carry its subscription id; other methods with that id continue
	// to normal handling.
	Methods []string
	// Sink receives the stream's StreamSent and StreamNotification
	// messages, in order; it must not block for long (the connection's
	// reader waits for it, which is how a slow consumer pushes back).
	Sink Sink
}

// StreamSent says a stream's request has been written to the connection
// (not that the server acknowledged it).
type StreamSent struct {
	Server string
	Gen    uint64
	ID     OpID
}

// StreamNotification is one notification of a stream, its params exactly
// as they arrived (never decoded into a generic map).
type StreamNotification struct {
	Server string
	Gen    uint64
	ID     OpID
	Method string
	Params json.RawMessage
}

// EndReason says how a stream (or a notification observer) ended.
type EndReason string

// The end reasons.
const (
	// EndCancelled: the client cancelled it (Cancel, session close,
	// dispose, shutdown).
	EndCancelled EndReason = "cancelled"
	// EndEnded: the server ended it with a final result, or by sending
	// notifications/cancelled for it.
	EndEnded EndReason = "ended"
	// EndError: the server answered with a JSON-RPC error, the request
	// could not be sent, or the consumer's handler failed.
	EndError EndReason = "error"
	// EndDisconnected: the connection (or, on HTTP, the stream's response)
	// ended without a final response.
	EndDisconnected EndReason = "disconnected"
)

// ProtocolError is a JSON-RPC error object as the server sent it.
type ProtocolError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// End is how a stream or observer ended.
type End struct {
	Reason EndReason
	// Error is a one-line description (empty for a plain ended).
	Error string
	// ProtocolError is the server's JSON-RPC error, when the stream ended
	// with one that had a numeric code.
	ProtocolError *ProtocolError
}
