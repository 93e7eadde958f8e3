package messages

import (
	"encoding/json"
	"sync"
)

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
	// messages, in order; it must not block for long.
	Sink Sink
	// Credits, when set, bound the stream's notifications in flight: the
	// port takes one before each StreamNotification (its reader waits),
	// the consumer returns it when done with the frame.
	Credits *Credits
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
	// NotSent is set when the stream's request never reached a
	// connection (its session was closed or its connection had ended
	// first): nothing was written, so it may be opened again on a fresh
	// session.
	NotSent bool
}

// Credits bound the frames of one stream between the connection port and
// the stream's consumer: the port takes a credit before it hands a frame
// on (a production reader waits for one, which pushes back on the server
// through the transport; a simulated server holds the frame), and the
// consumer returns it once the frame is fully handled. Close ends the
// bound for good (the stream ended: what still arrives is dropped anyway).
// A Credits is safe for concurrent use.
type Credits struct {
	slots  chan struct{}
	closed chan struct{}
	once   sync.Once
}

// NewCredits returns n credits.
func NewCredits(n int) *Credits {
	return &Credits{slots: make(chan struct{}, n), closed: make(chan struct{})}
}

// Acquire takes a credit, waiting for one; it returns false when cancel
// is closed first. After Close it returns true at once.
func (c *Credits) Acquire(cancel <-chan struct{}) bool {
	select {
	case c.slots <- struct{}{}:
		return true
	case <-c.closed:
		return true
	case <-cancel:
		return false
	}
}

// TryAcquire takes a credit if one is free (or after Close).
func (c *Credits) TryAcquire() bool {
	select {
	case c.slots <- struct{}{}:
		return true
	case <-c.closed:
		return true
	default:
		return false
	}
}

// Release returns a credit (a release without a matching take is ignored).
func (c *Credits) Release() {
	select {
	case <-c.slots:
	default:
	}
}

// Close lifts the bound.
func (c *Credits) Close() { c.once.Do(func() { close(c.closed) }) }
