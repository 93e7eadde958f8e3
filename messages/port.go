package messages

import "encoding/json"

// The connection port is the asynchronous boundary between the actors and
// MCP I/O. Production plugs in a goroutine bridge over real transports
// (package transports); the deterministic simulator plugs in simulated
// servers. Nothing on the actor side of the port ever blocks: every method
// returns at once, and every outcome comes back later as a message through a
// Sink.

// Sink receives the port's outcomes (DialResult, OpResult, ConnNotification,
// LateFrame, ConnClosed; a stream's StreamSent and StreamNotification go
// to the stream's own Sink). It must not block; the actor shell implements it by posting
// to the actor's mailbox. A port calls a Sink from any goroutine, but for a
// single connection it calls it in order: every OpResult and
// ConnNotification of a connection precedes its ConnClosed.
type Sink func(msg any)

// Dialer opens connections.
type Dialer interface {
	// Dial starts opening a connection, handshake included. It returns at
	// once; exactly one DialResult for req.Gen arrives on sink later, then
	// (on success) the connection's traffic and finally its ConnClosed.
	Dial(req DialRequest, sink Sink) Dialing
}

// Dialing is a dial in progress.
type Dialing interface {
	// Cancel abandons the dial: whatever was started (a child process, a
	// socket, an HTTP session) is released. The DialResult still arrives,
	// with KindAborted, unless it was already sent.
	Cancel()
}

// DialRequest asks for one connection.
type DialRequest struct {
	// Server is the configured name; it labels every outcome and error.
	Server string
	// Gen is the connection generation the server actor assigned. Every
	// outcome carries it back so that late traffic of an old connection is
	// recognised and ignored.
	Gen uint64
	// Endpoint is how to reach the server.
	Endpoint Endpoint
	// IDPrefix starts every JSON-RPC id the connection sends; the actor
	// draws it from the runtime's random source so ids are reproducible.
	IDPrefix string
	// ClientName and ClientVersion are sent in the handshake.
	ClientName, ClientVersion string
}

// DialProgress reports, before its DialResult, that a dial waits for
// something with a budget of its own: Installing true when a stdio server's
// package is being installed (an npx package's first use, which may take
// minutes), false once that is done and the server itself starts. The
// startup deadline covers the server's own start only: the server actor
// holds it while Installing and arms it afresh after.
type DialProgress struct {
	Server     string
	Gen        uint64
	Installing bool
	// What names what is being waited for ("installing @scope/pkg with
	// npm").
	What string
}

// DialResult is the outcome of a Dial.
type DialResult struct {
	Server string
	Gen    uint64
	// Conn is the open connection; nil when Err is set.
	Conn Conn
	// Info is what the handshake learned.
	Info ServerInfo
	// Err says why the dial failed.
	Err *Error
}

// ServerInfo is what a handshake learns about a server.
type ServerInfo struct {
	// Transport is how the connection was made (TransportSSE after a
	// Streamable HTTP endpoint fell back to legacy HTTP+SSE).
	Transport TransportKind
	// ProtocolVersion is the negotiated version.
	ProtocolVersion string
	// Name, Title and Version identify the server implementation.
	Name, Title, Version string
	// Instructions is the server's usage guidance, possibly empty.
	Instructions string
	// Capabilities is the server's capabilities object as sent.
	Capabilities json.RawMessage
}

// Conn is an open connection.
type Conn interface {
	// Send starts one JSON-RPC request. Exactly one OpResult with op.ID
	// arrives later, unless the connection closes first (then the OpResult
	// still arrives, with KindDisconnected, before ConnClosed).
	Send(op Op)
	// Cancel gives up on a request in the way its transport requires:
	// notifications/cancelled on stdio, Unix sockets and legacy SSE; abort of
	// that one HTTP exchange on Streamable HTTP. Sibling requests carry on.
	// The OpResult arrives with KindAborted unless it had already been sent.
	Cancel(id OpID)
	// Notify sends a notification (fire and forget).
	Notify(method string, params json.RawMessage)
	// Close starts closing: in-flight requests end with KindDisconnected,
	// a child process and its process group are terminated and reaped, and
	// then ConnClosed (with a nil Err) arrives.
	Close()
}

// OpID identifies one request on one connection; the actor allocates it.
type OpID uint64

// Op is one JSON-RPC request to send.
type Op struct {
	ID     OpID
	Method string
	// Params is the params member (nil for none). The port may add the
	// 2026-07-28 _meta envelope; it never rewrites anything else.
	Params json.RawMessage
	// Stream, when set, makes the request a stream: its correlated
	// notifications go to Stream.Sink (see StreamSpec) until its OpResult.
	Stream *StreamSpec
	// Assist, when set, is a caller waiting for this request that will run
	// the request's blocking work if the port offers it (see Assist); a
	// port may ignore it.
	Assist *Assist
	// Caller is the caller tag of the call that made the request (see
	// WithCaller); the port hands it back on the server requests it ties
	// to this request.
	Caller any
}

// OpResult is the outcome of one Op.
type OpResult struct {
	Server string
	Gen    uint64
	ID     OpID
	// Result is the JSON-RPC result member; nil when Err is set.
	Result json.RawMessage
	// Err is a transport failure, a cancellation, or (KindRPC) the server's
	// JSON-RPC error object.
	Err *Error
	// NotSent is set when the request never left: the connection had
	// already ended before any byte of it was written. The caller may send
	// it again on another connection; that is not a retry, since the server
	// never saw it.
	NotSent bool
	// ServerCancelled is set (with no Result and no Err) when the server
	// ended a stream by sending notifications/cancelled for it.
	ServerCancelled bool
	// OnlyThis is set with an Err that concerns this request alone (on
	// HTTP, its response stream ended without a result): the connection is
	// fine and its other requests carry on.
	OnlyThis bool
}

// ConnNotification is a server-to-client notification the port did not
// route elsewhere (for example notifications/tools/list_changed).
type ConnNotification struct {
	Server string
	Gen    uint64
	Method string
	Params json.RawMessage
}

// ConnClosed says a connection has ended and released everything it held.
// Err is nil when the runtime closed it, and says why otherwise (the
// process exited, the stream broke, the server broke the protocol).
type ConnClosed struct {
	Server string
	Gen    uint64
	Err    *Error
}

// UnknownResponse says a response arrived whose id the connection never
// sent (or, on a Streamable HTTP request's own stream, another request's
// id): it was ignored, and is counted (ServerStatus.UnknownResponses).
type UnknownResponse struct {
	Server string
	Gen    uint64
}

// LateFrame says a stream notification arrived after its stream had
// ended: it was dropped, and is counted (ServerStatus.LateFrames).
type LateFrame struct {
	Server string
	Gen    uint64
}
