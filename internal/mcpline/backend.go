package mcpline

import (
	"context"
	"net/http"
)

// Backend is the MCP server a front hands every message to that is not one
// of its custom [Methods]: our own server core (internal/mcpserve) or, for
// the test server, an adapter over mcp-go's server.
type Backend interface {
	// Open starts the session id. send writes one server-initiated
	// message (a notification) to the session's peer; it may be called
	// from any goroutine, one message at a time per call, until Close
	// returns, and fails once the peer is gone. ctx ends when the session
	// does.
	Open(ctx context.Context, id string, send func(msg []byte) error) (Session, error)
}

// Session is one session of a [Backend].
type Session interface {
	// Handle handles one incoming message: a request, a notification or a
	// response. header is the HTTP header the message came with (nil on
	// line transports). related, when not nil, writes a message that
	// belongs to this request (progress, a log line) on the request's own
	// channel (a Streamable HTTP POST's response); nil means the
	// session's send. Handle returns the encoded reply, or nil when there
	// is none; whatever the handling sent has been written, in order,
	// by then. It may be called concurrently.
	Handle(ctx context.Context, msg []byte, header http.Header, related func(msg []byte) error) []byte
	// Close ends the session. No Handle call is running when it is
	// called, and none follows.
	Close()
}
