package actors

import (
	"encoding/json"
	"sync"
)

// Catalog is the in-memory record of what each server's tools/list
// returned last. Server actors write it; tools read it to resolve tool
// names without connecting. (The disk cache of the proxy-tool issue will
// sit behind it.)
//
// Concurrency: safe for concurrent use; readers get copies.
type Catalog struct {
	mu sync.RWMutex
	// The fields below are guarded by mu.
	tools map[string][]ToolInfo
	stale map[string]bool
}

// ToolInfo is one listed tool.
type ToolInfo struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

func newCatalog() *Catalog {
	return &Catalog{tools: map[string][]ToolInfo{}, stale: map[string]bool{}}
}

func (c *Catalog) set(server string, items []json.RawMessage) {
	tools := make([]ToolInfo, 0, len(items))
	for _, raw := range items {
		var t ToolInfo
		if json.Unmarshal(raw, &t) == nil && t.Name != "" {
			tools = append(tools, t)
		}
	}
	c.mu.Lock()
	c.tools[server] = tools
	delete(c.stale, server)
	c.mu.Unlock()
}

func (c *Catalog) markStale(server string) {
	c.mu.Lock()
	c.stale[server] = true
	c.mu.Unlock()
}

// Tools returns the tools last listed for server, whether the server has
// been listed at all, and whether it said its list changed since.
func (c *Catalog) Tools(server string) (tools []ToolInfo, known, stale bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tools[server]
	return append([]ToolInfo(nil), t...), ok, c.stale[server]
}
