package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// Session is one client's session of a [Server]: what initialize (or each
// 2026-07-28 request) told the server about the client, and where
// server-initiated messages go.
type Session struct {
	srv  *Server
	id   string
	send func(msg []byte) error

	mu      sync.Mutex
	version string                 // the version initialize negotiated ("": none); guarded by mu
	level   mcp.LoggingLevel       // set by logging/setLevel ("": none); guarded by mu
	client  mcp.Implementation     // guarded by mu
	caps    mcp.ClientCapabilities // guarded by mu
}

// ID returns the session's identifier as the front named it.
func (ss *Session) ID() string { return ss.id }

// Close ends the session: it receives no more broadcasts.
func (ss *Session) Close() {
	ss.srv.mu.Lock()
	delete(ss.srv.sessions, ss)
	ss.srv.mu.Unlock()
}

// legacy reports whether initialize opened the session (2025-11-25 and
// older): such a session gets the server's notifications unasked, while a
// 2026-07-28 client asks for them with subscriptions/listen.
func (ss *Session) legacy() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version != ""
}

// Client returns the client's identity and capabilities as the session
// last learnt them (initialize, or a 2026-07-28 request's _meta).
func (ss *Session) Client() (mcp.Implementation, mcp.ClientCapabilities) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.client, ss.caps
}

// rpcError is a JSON-RPC error a method ends with.
type rpcError struct {
	code int
	msg  string
	data any
}

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{code: code, msg: fmt.Sprintf(format, args...)}
}

// call is the request being handled; its context carries it.
type call struct {
	ss       *Session
	id       json.RawMessage        // the request's id as the client spelled it
	out      func(msg []byte) error // messages belonging to the request
	header   http.Header
	modern   bool             // a 2026-07-28 request
	logLevel mcp.LoggingLevel // a 2026-07-28 request's _meta log level
	progress mcp.ProgressToken
}

type callKey struct{}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// Handle handles one incoming message (see [mcpline.Session]).
func (ss *Session) Handle(ctx context.Context, msg []byte, header http.Header, related func(msg []byte) error) []byte {
	var head struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(msg, &head); err != nil {
		return encodeError(nil, &rpcError{code: mcp.PARSE_ERROR, msg: "not a JSON-RPC message: " + err.Error()})
	}
	isRequest := !mcpline.IsNull(head.ID) && head.Method != ""
	if head.JSONRPC != mcp.JSONRPC_VERSION {
		if isRequest {
			return encodeError(head.ID, &rpcError{code: mcp.INVALID_REQUEST, msg: "jsonrpc must be \"2.0\""})
		}
		return nil
	}
	if mcpline.IsNull(head.ID) {
		return nil // notifications/cancelled is the front's; the rest need nothing
	}
	if head.Method == "" {
		return nil // a response: this server sends no requests
	}
	c := &call{ss: ss, id: head.ID, out: related, header: header}
	if c.out == nil {
		c.out = ss.send
	}
	if rerr := c.envelope(head.Method, head.Params); rerr != nil {
		return encodeError(head.ID, rerr)
	}
	result, rerr := ss.dispatch(context.WithValue(ctx, callKey{}, c), c, head.Method, head.Params)
	if rerr != nil {
		return encodeError(head.ID, rerr)
	}
	if c.modern {
		ss.srv.decorate(result, head.Method)
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{mcp.JSONRPC_VERSION, head.ID, result})
	if err != nil {
		return encodeError(head.ID, errorf(mcp.INTERNAL_ERROR, "cannot encode the result: %v", err))
	}
	return b
}

// envelope reads the request's _meta: its progress token and, for a
// 2026-07-28 request, the protocol version (which must be one we serve),
// the client's capabilities (required), identity and log level, and checks
// the standard HTTP headers against the body when they came over HTTP.
func (c *call) envelope(method string, params json.RawMessage) *rpcError {
	var p struct {
		Meta *mcp.Meta `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p) // a malformed body is the method's to report
	if p.Meta != nil {
		c.progress = p.Meta.ProgressToken
	}
	version := p.Meta.ProtocolVersion()
	if !mcp.IsModernProtocol(version) {
		return nil
	}
	c.modern = true
	if !mcp.IsValidProtocolVersion(version) {
		e := mcp.UnsupportedProtocolVersionError{Version: version, Supported: mcp.ValidProtocolVersions}
		return &rpcError{code: mcp.UNSUPPORTED_PROTOCOL_VERSION, msg: e.Error(),
			data: mcp.UnsupportedProtocolVersionData{Supported: e.Supported, Requested: version}}
	}
	caps := p.Meta.ClientCapabilities()
	if caps == nil {
		return errorf(mcp.INVALID_PARAMS, "missing or invalid _meta field %s", mcp.MetaKeyClientCapabilities)
	}
	if c.header != nil && c.header.Get(mcp.HeaderProtocolVersion) != "" {
		if err := mcp.ValidateStandardHeaders(c.header.Get, version, mcp.MCPMethod(method), params); err != nil {
			var mismatch mcp.HeaderMismatchError
			if errors.As(err, &mismatch) {
				return errorf(mcp.HEADER_MISMATCH, "%s", err)
			}
			return errorf(mcp.INVALID_PARAMS, "%s", err)
		}
	}
	c.logLevel = p.Meta.LogLevel()
	c.ss.mu.Lock()
	defer c.ss.mu.Unlock()
	c.ss.caps = *caps
	if info := p.Meta.ClientInfo(); info != nil {
		c.ss.client = *info
	}
	return nil
}

// decorate adds what 2026-07-28 requires of a result: resultType
// (complete, unless the handler chose one), serverInfo in _meta, and the
// cache hints on list, read and discovery results (always revalidate,
// private: nothing of ours is shareable).
func (s *Server) decorate(result any, method string) {
	r, ok := result.(mcp.ResultMetadata)
	if !ok {
		return
	}
	if r.GetResultType() == "" {
		r.SetResultType(mcp.ResultTypeComplete)
	}
	if meta := r.EnsureResultMeta(); meta.ServerInfo() == nil {
		meta.SetServerInfo(s.implementation())
	}
	switch mcp.MCPMethod(method) {
	case mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList,
		mcp.MethodResourcesRead, mcp.MethodServerDiscover:
		if h, ok := result.(mcp.CacheHintSetter); ok {
			if t, ok := result.(interface{ TTL() (int64, bool) }); !ok || !hasTTL(t) {
				h.SetCacheHints(0, mcp.CacheScopePrivate)
			}
		}
	}
}

func hasTTL(t interface{ TTL() (int64, bool) }) bool {
	_, ok := t.TTL()
	return ok
}

// encodeError encodes a JSON-RPC error response (id null when absent).
func encodeError(id json.RawMessage, e *rpcError) []byte {
	if mcpline.IsNull(id) {
		id = json.RawMessage("null")
	}
	type details struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   details         `json:"error"`
	}{mcp.JSONRPC_VERSION, id, details{e.code, e.msg, e.data}})
	if err != nil {
		b, _ = json.Marshal(mcpline.NewErrorReply(id, mcp.INTERNAL_ERROR, e.msg))
	}
	return b
}
