package transports

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/messages"
)

// classify turns a transport failure into the runtime's error type. It
// never prints a URL, a header or an environment value: network errors are
// described by their cause, and any other text goes through scrub first.
// kind is used when nothing more specific applies; field names the
// configuration field involved ("command", "url", "socket").
func (c *connInfo) classify(kind messages.ErrorKind, err error) *messages.Error {
	if err == nil {
		return nil
	}
	var me *messages.Error
	if errors.As(err, &me) {
		return messages.AsError(me, kind, c.server)
	}
	e := &messages.Error{Kind: kind, Server: c.server}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var originErr *crossOriginError
	switch {
	case errors.Is(err, context.Canceled):
		e.Kind, e.Message = messages.KindAborted, "cancelled"
	case errors.Is(err, ErrFrameTooLarge):
		e.Kind, e.Message = messages.KindProtocol, "server sent a message over the 16 MiB limit; the connection was closed"
	case errors.Is(err, errBudget):
		e.Kind, e.Message = messages.KindResourceExhausted, "a response would take the runtime's response bytes in flight over its budget (Options.MaxResponseBytesInFlight)"
	case errors.As(err, &originErr):
		e.Kind, e.Message = messages.KindConnectFailed, originErr.Error()
	case errors.Is(err, errTooManyRedirects):
		e.Kind, e.Message = messages.KindConnectFailed, fmt.Sprintf("the server redirected more than %d times", maxRedirects)
	case errors.Is(err, errStreamBroke):
		e.Kind, e.Message = messages.KindDisconnected, "the server's response stream broke off before its result"
	case errors.Is(err, ErrNotJSON):
		e.Kind, e.Message = messages.KindProtocol, fmt.Sprintf("server wrote output that is not JSON-RPC on %s", c.channel())
	case errors.Is(err, errUnauthorized):
		e.Kind, e.Message = messages.KindAuthRequired, "server requires authorization (HTTP 401)"
	case errors.Is(err, errSessionLost):
		e.Kind, e.Message = messages.KindDisconnected, "the server lost the session (HTTP 404); the next request starts a new one"
	case errors.As(err, &dnsErr):
		e.Message = fmt.Sprintf("cannot resolve the host of the %s", c.fieldLabel())
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Message = fmt.Sprintf("connection refused (field %s)", c.field)
	case errors.Is(err, syscall.ENOENT) && c.field == "socket":
		e.Message = "no socket at the configured path (field socket)"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		e.Kind, e.Message = messages.KindDisconnected, "connection reset by the server"
	case errors.As(err, &opErr) && opErr.Timeout():
		e.Message = fmt.Sprintf("connection timed out (field %s)", c.field)
	case errors.Is(err, errRefused):
		e.Kind, e.Message = messages.KindInitFailed, c.scrub(innermost(err, errRefused))
	case errors.Is(err, ErrClosed):
		e.Kind, e.Message = messages.KindDisconnected, "connection closed"
	default:
		e.Message = c.scrub(err.Error())
	}
	if status := c.statusOf(err); status >= 400 && e.Kind != messages.KindAuthRequired && !errors.Is(err, errSessionLost) {
		e.Message = fmt.Sprintf("server answered HTTP %d", status)
	}
	return e
}

// rpcError converts a JSON-RPC error object into the runtime's error type,
// keeping code and data.
func (c *connInfo) rpcError(d *mcp.JSONRPCErrorDetails) *messages.Error {
	e := &messages.Error{Kind: messages.KindRPC, Server: c.server, RPCCode: d.Code, Message: fmt.Sprintf("%s (JSON-RPC error %d)", oneLineMessage(d.Message), d.Code)}
	if d.Data != nil {
		e.RPCData = marshalData(d.Data)
	}
	return e
}

func (c *connInfo) channel() string {
	if c.field == "socket" {
		return "the socket"
	}
	return "stdout"
}

func (c *connInfo) fieldLabel() string { return c.field + " (field " + c.field + ")" }

func (c *connInfo) statusOf(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	return 0
}

// innermost renders err with the text of marker (and anything wrapping it
// at the front) removed, for messages like "handshake refused: ...".
func innermost(err, marker error) string {
	s := err.Error()
	if i := strings.Index(s, marker.Error()); i >= 0 {
		s = strings.TrimLeft(s[i+len(marker.Error()):], ": ")
	}
	return "handshake refused: " + s
}

var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"']+`)

// scrub removes URLs and every configured secret value from text that may
// have been built by a library from a request (Go's *url.Error quotes the
// URL, credentials included).
func (c *connInfo) scrub(s string) string {
	return c.redact(urlPattern.ReplaceAllString(s, "<url>"))
}

// redact replaces every configured value in s and folds it onto one line.
func (c *connInfo) redact(s string) string {
	for _, v := range c.secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "<redacted>")
		}
	}
	return oneLineMessage(s)
}

func oneLineMessage(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// statusError carries an HTTP status out of the transport wrapper.
type statusError struct{ status int }

func (s *statusError) Error() string { return fmt.Sprintf("HTTP %d", s.status) }
