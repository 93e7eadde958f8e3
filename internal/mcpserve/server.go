package mcpserve

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// ToolHandler serves one tools/call. An error becomes the JSON-RPC error
// -32603 with its text; a tool's own failure belongs in the result
// (IsError).
type ToolHandler func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)

// Tool is a tool with its handler.
type Tool struct {
	Tool    mcp.Tool
	Handler ToolHandler
}

// ResourceHandler reads one resource (or, for a template, one URI it
// matches; req.Params.Arguments then holds the template's variables).
type ResourceHandler func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error)

// PromptHandler serves one prompts/get.
type PromptHandler func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error)

// Options describe a server.
type Options struct {
	// Name and Version identify the server (serverInfo).
	Name, Version string
	// Instructions are given to clients at initialize and discovery.
	Instructions string
	// ToolsListChanged, ResourcesListChanged and PromptsListChanged
	// declare listChanged for that kind; the server then sends
	// notifications/…/list_changed when the kind's catalog changes (to
	// every 2025-11-25 session, and on the subscriptions/listen requests
	// of 2026-07-28 clients that asked for it).
	ToolsListChanged, ResourcesListChanged, PromptsListChanged bool
	// Logging declares the logging capability: clients may set a level
	// with logging/setLevel, and [Log] sends at or above it.
	Logging bool
	// Experimental is the capabilities' experimental member (nil: none).
	Experimental map[string]any
	// PageSize bounds the items of one list page; zero means one page.
	PageSize int
}

type resource struct {
	res     mcp.Resource
	handler ResourceHandler
}

type template struct {
	tmpl    mcp.ResourceTemplate
	handler ResourceHandler
}

type prompt struct {
	prompt  mcp.Prompt
	handler PromptHandler
}

// The kinds of the catalog, as capability bits.
const (
	kindTools = 1 << iota
	kindResources
	kindPrompts
)

// Server is an MCP server: its identity, capabilities and catalog. A
// kind's capability (tools, resources, prompts) is declared once an item
// of it has been added. Safe for concurrent use.
type Server struct {
	opts Options

	mu        sync.RWMutex
	kinds     int                 // capability bits of the kinds added; guarded by mu
	tools     map[string]Tool     // by name; guarded by mu
	resources map[string]resource // by URI; guarded by mu
	templates map[string]template // by URI template; guarded by mu
	prompts   map[string]prompt   // by name; guarded by mu
	sessions  map[*Session]bool   // open sessions; guarded by mu
	listeners map[*listener]bool  // open subscriptions/listen requests; guarded by mu
}

// New returns a server with an empty catalog.
func New(opts Options) *Server {
	return &Server{
		opts:      opts,
		tools:     map[string]Tool{},
		resources: map[string]resource{},
		templates: map[string]template{},
		prompts:   map[string]prompt{},
		sessions:  map[*Session]bool{},
		listeners: map[*listener]bool{},
	}
}

// AddTools adds (or replaces) tools.
func (s *Server) AddTools(tools ...Tool) {
	s.mu.Lock()
	for _, t := range tools {
		s.tools[t.Tool.Name] = t
	}
	s.kinds |= kindTools
	s.mu.Unlock()
	s.changed(kindTools)
}

// AddTool adds (or replaces) one tool.
func (s *Server) AddTool(tool mcp.Tool, h ToolHandler) { s.AddTools(Tool{Tool: tool, Handler: h}) }

// DeleteTools removes tools by name.
func (s *Server) DeleteTools(names ...string) {
	s.mu.Lock()
	for _, n := range names {
		delete(s.tools, n)
	}
	s.mu.Unlock()
	s.changed(kindTools)
}

// AddResource adds (or replaces) the resource with res.URI.
func (s *Server) AddResource(res mcp.Resource, h ResourceHandler) {
	s.mu.Lock()
	s.resources[res.URI] = resource{res, h}
	s.kinds |= kindResources
	s.mu.Unlock()
	s.changed(kindResources)
}

// AddResourceTemplate adds (or replaces) a resource template; resources/read
// serves a URI no resource has with the first template that matches it.
func (s *Server) AddResourceTemplate(tmpl mcp.ResourceTemplate, h ResourceHandler) {
	s.mu.Lock()
	s.templates[templateKey(tmpl)] = template{tmpl, h}
	s.kinds |= kindResources
	s.mu.Unlock()
	s.changed(kindResources)
}

// AddPrompt adds (or replaces) a prompt.
func (s *Server) AddPrompt(p mcp.Prompt, h PromptHandler) {
	s.mu.Lock()
	s.prompts[p.Name] = prompt{p, h}
	s.kinds |= kindPrompts
	s.mu.Unlock()
	s.changed(kindPrompts)
}

func templateKey(t mcp.ResourceTemplate) string {
	if t.URITemplate == nil || t.URITemplate.Template == nil {
		return ""
	}
	return t.URITemplate.Raw()
}

// Open starts a session (see [mcpline.Backend]).
func (s *Server) Open(_ context.Context, id string, send func(msg []byte) error) (mcpline.Session, error) {
	return s.NewSession(id, send), nil
}

// NewSession returns an open session; send writes server-initiated
// messages to its peer.
func (s *Server) NewSession(id string, send func(msg []byte) error) *Session {
	ss := &Session{srv: s, id: id, send: send}
	s.mu.Lock()
	s.sessions[ss] = true
	s.mu.Unlock()
	return ss
}

// capabilities returns what the server declares now.
func (s *Server) capabilities() mcp.ServerCapabilities {
	s.mu.RLock()
	kinds := s.kinds
	s.mu.RUnlock()
	var c mcp.ServerCapabilities
	if kinds&kindTools != 0 {
		c.Tools = &struct {
			ListChanged bool `json:"listChanged,omitempty"`
		}{s.opts.ToolsListChanged}
	}
	if kinds&kindResources != 0 {
		c.Resources = &struct {
			Subscribe   bool `json:"subscribe,omitempty"`
			ListChanged bool `json:"listChanged,omitempty"`
		}{ListChanged: s.opts.ResourcesListChanged}
	}
	if kinds&kindPrompts != 0 {
		c.Prompts = &struct {
			ListChanged bool `json:"listChanged,omitempty"`
		}{s.opts.PromptsListChanged}
	}
	if s.opts.Logging {
		c.Logging = &struct{}{}
	}
	c.Experimental = s.opts.Experimental
	return c
}

// has reports whether a kind's capability is declared.
func (s *Server) has(kind int) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.kinds&kind != 0
}

func (s *Server) implementation() mcp.Implementation {
	return mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}
}

// changed sends the kind's list_changed notification, when the server
// declares listChanged for it: to every session initialize opened, and on
// every subscriptions/listen request that asked for it.
func (s *Server) changed(kind int) {
	var method string
	switch {
	case kind == kindTools && s.opts.ToolsListChanged:
		method = string(mcp.MethodNotificationToolsListChanged)
	case kind == kindResources && s.opts.ResourcesListChanged:
		method = string(mcp.MethodNotificationResourcesListChanged)
	case kind == kindPrompts && s.opts.PromptsListChanged:
		method = string(mcp.MethodNotificationPromptsListChanged)
	default:
		return
	}
	s.Broadcast(method, nil)
	s.mu.RLock()
	var to []*listener
	for l := range s.listeners {
		if l.kinds&kind != 0 {
			to = append(to, l)
		}
	}
	s.mu.RUnlock()
	for _, l := range to {
		_ = l.send(method, nil)
	}
}

// Broadcast sends a notification to every session initialize opened
// (2025-11-25 and older; a 2026-07-28 client gets list changes on its
// subscriptions/listen request instead). Failures to send are the
// sessions' own end and are ignored.
func (s *Server) Broadcast(method string, params any) {
	msg, err := notification(method, params)
	if err != nil {
		return
	}
	s.mu.RLock()
	var to []*Session
	for ss := range s.sessions {
		to = append(to, ss)
	}
	s.mu.RUnlock()
	for _, ss := range to {
		if ss.legacy() {
			_ = ss.send(msg)
		}
	}
}

// notification encodes a JSON-RPC notification (params nil: none).
func notification(method string, params any) ([]byte, error) {
	n := struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{mcp.JSONRPC_VERSION, method, params}
	return json.Marshal(n)
}
