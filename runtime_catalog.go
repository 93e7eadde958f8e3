package mcprt

import (
	"encoding/json"

	"slices"

	"github.com/mcprt/mcprt/catalog"
)

// The typed catalog: what a server offers, as the runtime knows it (from
// the metadata cache or the last listing), without connecting anything.
// Text fields are cleaned of terminal and bidi controls and bounded as for
// the model; each item's _meta is kept as the server sent it (Meta, a JSON
// object or nil). Runtime.Connect lists a server's catalog afresh.

// ToolInfo is one tool of a server's catalog.
type ToolInfo = catalog.Tool

// ResourceInfo is one resource of a server's catalog.
type ResourceInfo = catalog.Resource

// TemplateInfo is one resource template of a server's catalog.
type TemplateInfo = catalog.ResourceTemplate

// ServerTools returns a server's tools; ok is false when the server's
// catalog was never listed (or no such server is configured).
func (r *Runtime) ServerTools(server string) (tools []ToolInfo, ok bool) {
	c := r.sys.Catalog().Snapshot().Server(server)
	if !c.Known() {
		return nil, false
	}
	return slices.Clone(c.Tools), true
}

// ServerResources returns a server's resources; ok is false when the
// server's catalog was never listed.
func (r *Runtime) ServerResources(server string) (resources []ResourceInfo, ok bool) {
	c := r.sys.Catalog().Snapshot().Server(server)
	if !c.Known() {
		return nil, false
	}
	return slices.Clone(c.Resources), true
}

// ServerTemplates returns a server's resource templates (RFC 6570); ok is
// false when the server's catalog was never listed. ReadTemplate reads
// one.
func (r *Runtime) ServerTemplates(server string) (templates []TemplateInfo, ok bool) {
	c := r.sys.Catalog().Snapshot().Server(server)
	if !c.Known() {
		return nil, false
	}
	return slices.Clone(c.ResourceTemplates), true
}

// ServerPrompts returns a server's prompts; ok is false when the server's
// catalog was never listed. GetPrompt renders one.
func (r *Runtime) ServerPrompts(server string) (prompts []PromptInfo, ok bool) {
	c := r.sys.Catalog().Snapshot().Server(server)
	if !c.Known() {
		return nil, false
	}
	out := make([]PromptInfo, 0, len(c.Prompts))
	for _, p := range c.Prompts {
		out = append(out, PromptInfo{Server: server, Prompt: p})
	}
	return out, true
}

// metaObject keeps a _meta member that is a JSON object.
func metaObject(raw json.RawMessage) json.RawMessage { return catalog.MetaObject(raw) }
