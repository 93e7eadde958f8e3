package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrorKind classifies a failure for callers and for retry decisions. Its
// string form (Code) is a stable identifier that appears in tool results as
// details.error, so values are never renamed.
type ErrorKind int

// The error kinds. The first eleven are the proxy tool's stable codes.
const (
	// KindNone is the zero value; it never appears in an Error.
	KindNone ErrorKind = iota
	// KindToolNotFound: no configured server offers the named tool.
	KindToolNotFound
	// KindServerNotFound: no server of that name is configured.
	KindServerNotFound
	// KindServerDisabled: the server is configured with disabled: true.
	KindServerDisabled
	// KindAuthRequired: the server answered 401 or asked for authorization.
	KindAuthRequired
	// KindServerBackoff: a recent connect failed and is remembered; the
	// caller is told how long to wait (Error.RetryAfter) instead of retrying.
	KindServerBackoff
	// KindConnectFailed: spawning, dialing or reaching the server failed.
	KindConnectFailed
	// KindToolError: the tool ran and reported an error result (isError).
	KindToolError
	// KindAborted: the caller (or shutdown) cancelled the operation.
	KindAborted
	// KindInitFailed: the connection opened but the MCP handshake failed.
	KindInitFailed
	// KindInitTimeout: the startup deadline passed before the handshake ended.
	KindInitTimeout
	// KindAmbiguousTool: the tool name matches tools on several servers.
	KindAmbiguousTool
	// KindRequestTimeout: a call or catalog deadline passed.
	KindRequestTimeout
	// KindDisconnected: the connection ended while the operation was in flight.
	KindDisconnected
	// KindProtocol: the server broke the protocol (bad frame, oversized
	// message, non-JSON output).
	KindProtocol
	// KindRPC: the server answered with a JSON-RPC error object.
	KindRPC
	// KindInvalidArgs: the caller's arguments were malformed.
	KindInvalidArgs
	// KindShutdown: the runtime is closing and refuses new work.
	KindShutdown
	// KindServerFailed: the server's actor crashed too often and is kept down
	// until a reconnect is asked for.
	KindServerFailed
	// KindConfig: the configuration is invalid.
	KindConfig
	// KindInternal: a bug in the runtime (a recovered panic, a broken invariant).
	KindInternal
	// KindResourceExhausted: the call would take the runtime over one of
	// its resource budgets (the response bytes in flight); nothing was
	// kept, and the call may succeed later, when fewer are in flight.
	KindResourceExhausted
)

var kindCodes = [...]string{
	KindNone:           "none",
	KindToolNotFound:   "tool_not_found",
	KindServerNotFound: "server_not_found",
	KindServerDisabled: "server_disabled",
	KindAuthRequired:   "auth_required",
	KindServerBackoff:  "server_backoff",
	KindConnectFailed:  "connect_failed",
	KindToolError:      "tool_error",
	KindAborted:        "aborted",
	KindInitFailed:     "init_failed",
	KindInitTimeout:    "init_timeout",
	KindAmbiguousTool:  "ambiguous_tool",
	KindRequestTimeout: "request_timeout",
	KindDisconnected:   "disconnected",
	KindProtocol:       "protocol_error",
	KindRPC:            "rpc_error",
	KindInvalidArgs:    "invalid_args",
	KindShutdown:       "shutdown",
	KindServerFailed:   "server_failed",
	KindConfig:         "config_error",
	KindInternal:       "internal_error",

	KindResourceExhausted: "resource_exhausted",
}

// Code returns the stable identifier of the kind, e.g. "tool_not_found".
func (k ErrorKind) Code() string {
	if k < 0 || int(k) >= len(kindCodes) {
		return fmt.Sprintf("kind_%d", int(k))
	}
	return kindCodes[k]
}

// String returns Code.
func (k ErrorKind) String() string { return k.Code() }

// Transient reports whether an operation that failed with this kind may
// succeed if tried again later without any change by the user: connection
// failures, timeouts and disconnects are transient; bad names, bad
// arguments, tool errors, protocol violations and configuration are not.
// Retry decisions use this predicate, never error strings.
func (k ErrorKind) Transient() bool {
	switch k {
	case KindConnectFailed, KindInitTimeout, KindDisconnected, KindServerBackoff, KindRequestTimeout:
		return true
	}
	return false
}

// Error is the one error type the runtime returns to its callers. Message is
// a single line that names the server and never contains a secret value.
type Error struct {
	// Kind classifies the failure.
	Kind ErrorKind
	// Server names the server concerned, when there is one.
	Server string
	// Message says what happened, in one line, without the server prefix.
	Message string
	// RPCCode is the JSON-RPC error code when Kind is KindRPC (or when a
	// server's structured error was kept); zero otherwise.
	RPCCode int
	// RPCData is the JSON-RPC error's data member, when present.
	RPCData json.RawMessage
	// RetryAfter is how long a KindServerBackoff caller should wait.
	RetryAfter time.Duration
	// ServerStderr holds the last lines a stdio server wrote to its stderr
	// before the failure (at most 10 lines of at most 300 bytes, with every
	// configured secret and every environment value given to the server
	// masked). It is for the person and the host, never for the model:
	// Error() and Message leave it out, and model-facing text never
	// includes it (a server's stderr can hold credentials).
	ServerStderr []string
}

// Error renders the single-line message: `server "x": message`.
func (e *Error) Error() string {
	msg := oneLine(e.Message)
	if e.Server == "" {
		return msg
	}
	return fmt.Sprintf("server %q: %s", e.Server, msg)
}

// Code returns Kind.Code().
func (e *Error) Code() string { return e.Kind.Code() }

// Protocol returns the server's JSON-RPC error object (code, its own
// message, data) when Kind is KindRPC, and nil otherwise. An error object
// without a numeric code (read as code 0, which no JSON-RPC error uses)
// has none either: a stream it ends is an interruption, not a terminal
// protocol error (events-protocol.md).
func (e *Error) Protocol() *ProtocolError {
	if e == nil || e.Kind != KindRPC || e.RPCCode == 0 {
		return nil
	}
	msg := e.Message
	suffix := fmt.Sprintf(" (JSON-RPC error %d)", e.RPCCode)
	if n := len(msg) - len(suffix); n >= 0 && msg[n:] == suffix {
		msg = msg[:n]
	}
	return &ProtocolError{Code: e.RPCCode, Message: msg, Data: e.RPCData}
}

// Is makes errors.Is(err, &Error{Kind: k}) match on kind alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Server == "" && t.Message == ""
}

// Errorf builds an Error of the given kind for a server.
func Errorf(kind ErrorKind, server, format string, args ...any) *Error {
	return &Error{Kind: kind, Server: server, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of err when it is (or wraps) an *Error, and
// KindInternal otherwise.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// AsError converts any error to an *Error for server, keeping an existing
// *Error as it is and classifying anything else with kind.
func AsError(err error, kind ErrorKind, server string) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Server == "" && server != "" {
			c := *e
			c.Server = server
			return &c
		}
		return e
	}
	return &Error{Kind: kind, Server: server, Message: err.Error()}
}

// oneLine folds a message onto one line so that errors stay one line on a
// terminal whatever a server put in them.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.NewReplacer("\r", " ", "\n", " ").Replace(s)), " ")
}
