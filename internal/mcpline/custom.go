package mcpline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// SubscriptionIDKey is the params._meta key that correlates a stream's
// notifications with the request that opened it; its value is that
// request's JSON-RPC id, exactly as the client spelled it.
const SubscriptionIDKey = "io.modelcontextprotocol/subscriptionId"

// CancelledMethod is the notification either side sends to cancel a request.
const CancelledMethod = string(mcp.MethodNotificationCancelled)

// Handler serves one custom request (a plain request or a long-lived
// stream). ctx ends when the client cancels the request
// (notifications/cancelled on line transports and legacy SSE, the aborted
// POST on Streamable HTTP) or the connection ends. The request ends with
// what the handler returns, unless it called [Call.End] before:
//   - (result, nil): a JSON-RPC result; a nil result is sent as {};
//   - (_, *[Error]): a JSON-RPC error with its code, message and data;
//   - (_, [ErrServerCancel]): the server sends notifications/cancelled for
//     the request and no response;
//   - (_, [ErrNoResult]): no response; on Streamable HTTP the POST's
//     response stream ends;
//   - (_, any other error): the JSON-RPC error -32603 with its text.
//
// A request that never ends is a handler that waits for ctx.
type Handler func(ctx context.Context, call *Call) (result any, err error)

// Methods maps custom method names to their handlers. Fronts answer these
// methods themselves and hand every other message to the MCP server.
type Methods map[string]Handler

// Error is a JSON-RPC error a [Handler] ends its request with. Data is sent
// as the error's data unless nil; a json.RawMessage is sent as it is.
type Error struct {
	Code    int
	Message string
	Data    any
}

// Error returns the error's message and code.
func (e *Error) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// ErrServerCancel ends a request with notifications/cancelled from the
// server instead of a response.
var ErrServerCancel = errors.New("mcpline: the server cancels the request")

// ErrNoResult ends a request without any response: on Streamable HTTP the
// POST's response stream closes; elsewhere nothing is written.
var ErrNoResult = errors.New("mcpline: the request ends without a result")

// errCallClosed is what Send and Notify return once the call's channel no
// longer takes frames (the HTTP response is over, or the call ended without
// a result on Streamable HTTP).
var errCallClosed = errors.New("mcpline: the request's stream is closed")

// Call is one custom request being served. Its methods may be called from
// any goroutine, also after the handler's request ended ("late" frames go
// out for as long as the request's channel exists: on line transports and
// legacy SSE while the connection lasts, on Streamable HTTP until the
// handler returns).
type Call struct {
	id     json.RawMessage
	method string
	params json.RawMessage
	header http.Header

	// out writes one JSON-RPC message on the call's channel.
	out func(msg []byte) error
	// suppressed reports whether the client cancelled the request, in
	// which case its end is not written.
	suppressed func() bool
	// onEnd runs once when the request ends (with how it ended).
	onEnd func(err error)
	// drop ends the connection (line transports, legacy SSE) or the
	// response (Streamable HTTP) that carries the call.
	drop func()

	mu    sync.Mutex
	ended bool // guarded by mu
}

// ID returns the request's JSON-RPC id as the client spelled it.
func (c *Call) ID() json.RawMessage { return c.id }

// Method returns the request's method.
func (c *Call) Method() string { return c.method }

// Params returns the request's params as received (nil when absent).
func (c *Call) Params() json.RawMessage { return c.params }

// Header returns the HTTP headers of the request (Streamable HTTP) or of
// the POST that carried it (legacy SSE); nil on line transports.
func (c *Call) Header() http.Header { return c.header }

// Send writes a notification belonging to this request: params (nil, or
// anything that encodes to a JSON object) get
// _meta[SubscriptionIDKey] = the request's id, keeping any other _meta key.
func (c *Call) Send(method string, params any) error {
	b, err := notification(method, params, c.id)
	if err != nil {
		return err
	}
	return c.out(b)
}

// Notify writes a notification that is not correlated with this request
// (no subscription id) on the request's channel.
func (c *Call) Notify(method string, params any) error {
	b, err := notification(method, params, nil)
	if err != nil {
		return err
	}
	return c.out(b)
}

// SendRaw writes msg on the request's channel exactly as given, without
// checking or stamping it: test servers use it for malformed frames and
// for responses [Error] cannot express (an error whose code is not a
// number). msg must not contain a line break, which would end the line on
// line transports and the event on an SSE stream.
func (c *Call) SendRaw(msg []byte) error {
	if bytes.ContainsAny(msg, "\r\n") {
		return errors.New("mcpline: a raw frame must not contain a line break")
	}
	return c.out(msg)
}

// Disconnect ends the request without a result, as [ErrNoResult] does, and
// drops what carries it, as a broken connection would:
//   - on a line connection the whole session ends: from now on no custom
//     request writes anything (no frames, no ends), every handler's context
//     ends, and ServeWith returns once they have returned (a stdio server's
//     process then exits and its stdout ends). Ordinary MCP requests
//     already in flight are still answered first, so a tool call that
//     asked for the disconnect gets its result;
//   - a legacy SSE session ends the same way, and its event stream with it;
//   - on Streamable HTTP only the request's own response ends; other
//     requests are not touched.
func (c *Call) Disconnect() {
	_ = c.End(nil, ErrNoResult)
	c.drop()
}

// End ends the request now, exactly as if the handler returned (result,
// err); the handler's own return value is then ignored. Frames sent later
// still go out (see [Call]). It returns an error if the request had ended
// already or the end could not be written.
func (c *Call) End(result any, err error) error {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return errors.New("mcpline: the request has ended already")
	}
	c.ended = true
	c.mu.Unlock()
	defer c.onEnd(err)
	if c.suppressed() {
		return nil
	}
	b, werr := endMessage(c.id, result, err)
	if werr != nil || b == nil {
		return werr
	}
	return c.out(b)
}

// run calls h and ends the request with its outcome unless it ended already.
// A panic ends the request with an internal error.
func (c *Call) run(ctx context.Context, h Handler) {
	defer func() {
		if r := recover(); r != nil {
			_ = c.End(nil, fmt.Errorf("internal error: %v", r))
		}
	}()
	result, err := h(ctx, c)
	_ = c.End(result, err)
}

// endMessage encodes how a request ends: a response, a notifications/cancelled
// or nothing (nil).
func endMessage(id json.RawMessage, result any, err error) ([]byte, error) {
	var rpcErr *Error
	switch {
	case err == nil:
		raw, merr := json.Marshal(result)
		if merr != nil {
			return json.Marshal(NewErrorReply(id, mcp.INTERNAL_ERROR, "cannot encode result: "+merr.Error()))
		}
		if bytes.Equal(raw, []byte("null")) {
			raw = []byte("{}")
		}
		return json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
		}{mcp.JSONRPC_VERSION, id, raw})
	case errors.Is(err, ErrNoResult):
		return nil, nil
	case errors.Is(err, ErrServerCancel):
		return notification(CancelledMethod, map[string]any{
			"requestId": id,
			"reason":    "the server cancelled the request",
		}, nil)
	case errors.As(err, &rpcErr):
		reply := NewErrorReply(id, rpcErr.Code, rpcErr.Message)
		if rpcErr.Data != nil {
			data, merr := json.Marshal(rpcErr.Data)
			if merr != nil {
				return nil, fmt.Errorf("mcpline: encode error data: %w", merr)
			}
			reply.Error.Data = data
		}
		return json.Marshal(reply)
	default:
		return json.Marshal(NewErrorReply(id, mcp.INTERNAL_ERROR, err.Error()))
	}
}

// notification encodes a JSON-RPC notification. When subscription is not
// empty, params._meta[SubscriptionIDKey] is set to it, keeping every other
// _meta key.
func notification(method string, params any, subscription json.RawMessage) ([]byte, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("mcpline: encode %s params: %w", method, err)
	}
	if len(subscription) > 0 {
		if raw, err = stamp(raw, subscription); err != nil {
			return nil, fmt.Errorf("mcpline: %s: %w", method, err)
		}
	}
	msg := struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{JSONRPC: mcp.JSONRPC_VERSION, Method: method}
	if !bytes.Equal(raw, []byte("null")) {
		msg.Params = raw
	}
	return json.Marshal(msg)
}

// stamp sets _meta[SubscriptionIDKey] = id in the JSON object params (null
// counts as {}).
func stamp(params, id json.RawMessage) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if !bytes.Equal(params, []byte("null")) {
		if err := json.Unmarshal(params, &obj); err != nil || obj == nil {
			return nil, errors.New("params must be a JSON object to carry _meta")
		}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj["_meta"]; ok && !bytes.Equal(m, []byte("null")) {
		if err := json.Unmarshal(m, &meta); err != nil || meta == nil {
			return nil, errors.New("params._meta must be a JSON object")
		}
	}
	meta[SubscriptionIDKey] = id
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = m
	return json.Marshal(obj)
}

type headerKey struct{}

// withHeader records the HTTP headers a message came with in ctx.
func withHeader(ctx context.Context, h http.Header) context.Context {
	if h == nil {
		return ctx
	}
	return context.WithValue(ctx, headerKey{}, h)
}

// RequestHeader returns the HTTP headers of the POST that carried the
// message being handled on a legacy SSE connection (mcp-go's own
// CallToolRequest.Header stays empty there), or nil.
func RequestHeader(ctx context.Context) http.Header {
	h, _ := ctx.Value(headerKey{}).(http.Header)
	return h
}
