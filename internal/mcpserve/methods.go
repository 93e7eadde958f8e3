package mcpserve

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
)

// dispatch runs one request's method.
func (ss *Session) dispatch(ctx context.Context, c *call, method string, params json.RawMessage) (any, *rpcError) {
	s := ss.srv
	switch m := mcp.MCPMethod(method); m {
	case mcp.MethodInitialize, mcp.MethodPing, mcp.MethodSetLogLevel:
		if c.modern {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "%s was removed in protocol version %s", method, mcp.ProtocolVersion20260728)
		}
		switch m {
		case mcp.MethodInitialize:
			return ss.initialize(params)
		case mcp.MethodPing:
			return &mcp.EmptyResult{}, nil
		}
		return ss.setLevel(params)
	case mcp.MethodServerDiscover:
		if !c.modern {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "%s requires protocol version %s or later", method, mcp.ProtocolVersion20260728)
		}
		return &mcp.DiscoverResult{SupportedVersions: mcp.ValidProtocolVersions, Capabilities: s.capabilities(), Instructions: s.opts.Instructions}, nil
	case mcp.MethodSubscriptionsListen:
		if !c.modern {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "%s requires protocol version %s or later", method, mcp.ProtocolVersion20260728)
		}
		return s.listen(ctx, c, params)
	case mcp.MethodToolsList, mcp.MethodToolsCall:
		if !s.has(kindTools) {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "tools are not supported")
		}
		if m == mcp.MethodToolsList {
			return s.listTools(params)
		}
		return s.callTool(ctx, c, params)
	case mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList, mcp.MethodResourcesRead:
		if !s.has(kindResources) {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "resources are not supported")
		}
		switch m {
		case mcp.MethodResourcesList:
			return s.listResources(params)
		case mcp.MethodResourcesTemplatesList:
			return s.listTemplates(params)
		}
		return s.readResource(ctx, c, params)
	case mcp.MethodPromptsList, mcp.MethodPromptsGet:
		if !s.has(kindPrompts) {
			return nil, errorf(mcp.METHOD_NOT_FOUND, "prompts are not supported")
		}
		if m == mcp.MethodPromptsList {
			return s.listPrompts(params)
		}
		return s.getPrompt(ctx, c, params)
	}
	return nil, errorf(mcp.METHOD_NOT_FOUND, "method %q not found", method)
}

func (ss *Session) initialize(params json.RawMessage) (any, *rpcError) {
	var p mcp.InitializeParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, errorf(mcp.INVALID_PARAMS, "initialize params: %v", err)
	}
	v := mcp.NegotiateLegacyVersion(p.ProtocolVersion)
	ss.mu.Lock()
	ss.version, ss.client, ss.caps = v, p.ClientInfo, p.Capabilities
	ss.mu.Unlock()
	return &mcp.InitializeResult{
		ProtocolVersion: v, Capabilities: ss.srv.capabilities(),
		ServerInfo: ss.srv.implementation(), Instructions: ss.srv.opts.Instructions,
	}, nil
}

// levels orders the log levels, least severe first.
var levels = []mcp.LoggingLevel{
	mcp.LoggingLevelDebug, mcp.LoggingLevelInfo, mcp.LoggingLevelNotice, mcp.LoggingLevelWarning,
	mcp.LoggingLevelError, mcp.LoggingLevelCritical, mcp.LoggingLevelAlert, mcp.LoggingLevelEmergency,
}

func (ss *Session) setLevel(params json.RawMessage) (any, *rpcError) {
	if !ss.srv.opts.Logging {
		return nil, errorf(mcp.METHOD_NOT_FOUND, "logging is not supported")
	}
	var p mcp.SetLevelParams
	if err := json.Unmarshal(params, &p); err != nil || !slices.Contains(levels, p.Level) {
		return nil, errorf(mcp.INVALID_PARAMS, "logging/setLevel: level must be one of %v", levels)
	}
	ss.mu.Lock()
	ss.level = p.Level
	ss.mu.Unlock()
	return &mcp.EmptyResult{}, nil
}

// page returns one page of items sorted by name: those after the cursor
// (the base64 of the last name of the page before), at most PageSize of
// them, and the cursor of the next page ("" after the last).
func page[T any](s *Server, params json.RawMessage, items []T, name func(T) string) ([]T, mcp.Cursor, *rpcError) {
	var p mcp.PaginatedParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, "", errorf(mcp.INVALID_PARAMS, "params: %v", err)
		}
	}
	slices.SortFunc(items, func(a, b T) int { return cmp.Compare(name(a), name(b)) })
	start := 0
	if p.Cursor != "" {
		after, err := base64.StdEncoding.DecodeString(string(p.Cursor))
		if err != nil {
			return nil, "", errorf(mcp.INVALID_PARAMS, "invalid cursor")
		}
		for start < len(items) && name(items[start]) <= string(after) {
			start++
		}
	}
	items = items[start:]
	var next mcp.Cursor
	if n := s.opts.PageSize; n > 0 && len(items) > n {
		items = items[:n]
		next = mcp.Cursor(base64.StdEncoding.EncodeToString([]byte(name(items[n-1]))))
	}
	if items == nil {
		items = []T{}
	}
	return items, next, nil
}

func (s *Server) listTools(params json.RawMessage) (any, *rpcError) {
	s.mu.RLock()
	all := make([]mcp.Tool, 0, len(s.tools))
	for _, t := range s.tools {
		all = append(all, t.Tool)
	}
	s.mu.RUnlock()
	items, next, rerr := page(s, params, all, func(t mcp.Tool) string { return t.Name })
	if rerr != nil {
		return nil, rerr
	}
	r := &mcp.ListToolsResult{Tools: items}
	r.NextCursor = next
	return r, nil
}

func (s *Server) listResources(params json.RawMessage) (any, *rpcError) {
	s.mu.RLock()
	all := make([]mcp.Resource, 0, len(s.resources))
	for _, r := range s.resources {
		all = append(all, r.res)
	}
	s.mu.RUnlock()
	items, next, rerr := page(s, params, all, func(r mcp.Resource) string { return r.Name })
	if rerr != nil {
		return nil, rerr
	}
	r := &mcp.ListResourcesResult{Resources: items}
	r.NextCursor = next
	return r, nil
}

func (s *Server) listTemplates(params json.RawMessage) (any, *rpcError) {
	s.mu.RLock()
	all := make([]mcp.ResourceTemplate, 0, len(s.templates))
	for _, t := range s.templates {
		all = append(all, t.tmpl)
	}
	s.mu.RUnlock()
	items, next, rerr := page(s, params, all, func(t mcp.ResourceTemplate) string { return t.Name })
	if rerr != nil {
		return nil, rerr
	}
	r := &mcp.ListResourceTemplatesResult{ResourceTemplates: items}
	r.NextCursor = next
	return r, nil
}

func (s *Server) listPrompts(params json.RawMessage) (any, *rpcError) {
	s.mu.RLock()
	all := make([]mcp.Prompt, 0, len(s.prompts))
	for _, p := range s.prompts {
		all = append(all, p.prompt)
	}
	s.mu.RUnlock()
	items, next, rerr := page(s, params, all, func(p mcp.Prompt) string { return p.Name })
	if rerr != nil {
		return nil, rerr
	}
	r := &mcp.ListPromptsResult{Prompts: items}
	r.NextCursor = next
	return r, nil
}

func (s *Server) callTool(ctx context.Context, c *call, params json.RawMessage) (any, *rpcError) {
	req := mcp.CallToolRequest{Header: c.header}
	req.Method = string(mcp.MethodToolsCall)
	if err := json.Unmarshal(params, &req.Params); err != nil {
		return nil, errorf(mcp.INVALID_PARAMS, "tools/call params: %v", err)
	}
	s.mu.RLock()
	t, ok := s.tools[req.Params.Name]
	s.mu.RUnlock()
	if !ok {
		return nil, errorf(mcp.INVALID_PARAMS, "tool %q not found", req.Params.Name)
	}
	res, err := guard(func() (*mcp.CallToolResult, error) { return t.Handler(ctx, req) })
	if err != nil {
		return nil, errorf(mcp.INTERNAL_ERROR, "%v", err)
	}
	if res == nil {
		return nil, errorf(mcp.INTERNAL_ERROR, "tool %q returned no result", req.Params.Name)
	}
	return res, nil
}

func (s *Server) readResource(ctx context.Context, c *call, params json.RawMessage) (any, *rpcError) {
	req := mcp.ReadResourceRequest{Header: c.header}
	req.Method = string(mcp.MethodResourcesRead)
	if err := json.Unmarshal(params, &req.Params); err != nil {
		return nil, errorf(mcp.INVALID_PARAMS, "resources/read params: %v", err)
	}
	uri := req.Params.URI
	s.mu.RLock()
	h := s.resources[uri].handler
	if h == nil {
		for _, key := range slices.Sorted(maps.Keys(s.templates)) {
			t := s.templates[key]
			if key == "" || !t.tmpl.URITemplate.Regexp().MatchString(uri) {
				continue
			}
			h = t.handler
			req.Params.Arguments = map[string]any{}
			for name, v := range t.tmpl.URITemplate.Match(uri) { // values as []string, as mcp-go gives them
				req.Params.Arguments[name] = v.V
			}
			break
		}
	}
	s.mu.RUnlock()
	if h == nil {
		code := mcp.RESOURCE_NOT_FOUND
		if c.modern {
			code = mcp.INVALID_PARAMS // 2026-07-28 dropped -32002
		}
		return nil, errorf(code, "resource %q not found", uri)
	}
	contents, err := guard(func() ([]mcp.ResourceContents, error) { return h(ctx, req) })
	if err != nil {
		return nil, errorf(mcp.INTERNAL_ERROR, "%v", err)
	}
	if contents == nil {
		contents = []mcp.ResourceContents{}
	}
	return &mcp.ReadResourceResult{Contents: contents}, nil
}

func (s *Server) getPrompt(ctx context.Context, c *call, params json.RawMessage) (any, *rpcError) {
	req := mcp.GetPromptRequest{Header: c.header}
	req.Method = string(mcp.MethodPromptsGet)
	if err := json.Unmarshal(params, &req.Params); err != nil {
		return nil, errorf(mcp.INVALID_PARAMS, "prompts/get params: %v", err)
	}
	s.mu.RLock()
	p, ok := s.prompts[req.Params.Name]
	s.mu.RUnlock()
	if !ok {
		return nil, errorf(mcp.INVALID_PARAMS, "prompt %q not found", req.Params.Name)
	}
	res, err := guard(func() (*mcp.GetPromptResult, error) { return p.handler(ctx, req) })
	if err != nil {
		return nil, errorf(mcp.INTERNAL_ERROR, "%v", err)
	}
	if res == nil {
		return nil, errorf(mcp.INTERNAL_ERROR, "prompt %q returned no result", req.Params.Name)
	}
	return res, nil
}

// guard runs a handler, turning a panic into an error.
func guard[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in handler: %v", r)
		}
	}()
	return f()
}
