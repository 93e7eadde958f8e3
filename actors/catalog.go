package actors

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
)

// Catalog is the in-memory record of what each server's tools/list
// returned last. Server actors write it; tools read it to resolve tool
// names without connecting. (The disk cache of the proxy-tool issue will
// sit behind it.)
//
// Concurrency: safe for concurrent use. Writers build a new immutable
// Snapshot (copy on write, serialised by mu); readers load the current one
// without locking, so name resolution on the call path costs two map
// lookups.
type Catalog struct {
	mu   sync.Mutex // serialises writers
	snap atomic.Pointer[Snapshot]
}

// ToolInfo is one listed tool.
type ToolInfo struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// ToolRef names one tool of one server.
type ToolRef struct {
	Server, Tool string
}

// Snapshot is an immutable view of the catalog. Nothing it returns may be
// modified.
type Snapshot struct {
	servers map[string]serverTools
	byName  map[string][]ToolRef // exact tool name → tools, in server order of listing
	byNorm  map[string][]ToolRef // NormalizeToolName(name) → tools
}

type serverTools struct {
	tools []ToolInfo
	stale bool
}

// NormalizeToolName folds the spellings a model mixes up: case, and '-'
// versus '_'.
func NormalizeToolName(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "_")) }

func newCatalog() *Catalog {
	c := &Catalog{}
	c.snap.Store(&Snapshot{servers: map[string]serverTools{}, byName: map[string][]ToolRef{}, byNorm: map[string][]ToolRef{}})
	return c
}

// update replaces one server's entry and rebuilds the indexes.
func (c *Catalog) update(server string, f func(old serverTools, known bool) serverTools) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.snap.Load()
	next := &Snapshot{servers: make(map[string]serverTools, len(old.servers)+1), byName: map[string][]ToolRef{}, byNorm: map[string][]ToolRef{}}
	for k, v := range old.servers {
		next.servers[k] = v
	}
	prev, known := old.servers[server]
	next.servers[server] = f(prev, known)
	for s, st := range next.servers {
		for _, t := range st.tools {
			ref := ToolRef{Server: s, Tool: t.Name}
			next.byName[t.Name] = append(next.byName[t.Name], ref)
			n := NormalizeToolName(t.Name)
			next.byNorm[n] = append(next.byNorm[n], ref)
		}
	}
	for _, idx := range []map[string][]ToolRef{next.byName, next.byNorm} {
		for _, refs := range idx {
			sortRefs(refs)
		}
	}
	c.snap.Store(next)
}

func sortRefs(refs []ToolRef) {
	for i := 1; i < len(refs); i++ {
		for j := i; j > 0 && (refs[j].Server < refs[j-1].Server || refs[j].Server == refs[j-1].Server && refs[j].Tool < refs[j-1].Tool); j-- {
			refs[j], refs[j-1] = refs[j-1], refs[j]
		}
	}
}

func (c *Catalog) set(server string, items []json.RawMessage) {
	tools := make([]ToolInfo, 0, len(items))
	for _, raw := range items {
		var t ToolInfo
		if json.Unmarshal(raw, &t) == nil && t.Name != "" {
			tools = append(tools, t)
		}
	}
	c.update(server, func(serverTools, bool) serverTools { return serverTools{tools: tools} })
}

func (c *Catalog) markStale(server string) {
	c.update(server, func(old serverTools, _ bool) serverTools { return serverTools{tools: old.tools, stale: true} })
}

// Snapshot returns the current immutable view.
func (c *Catalog) Snapshot() *Snapshot { return c.snap.Load() }

// Tools returns a copy of the tools last listed for server, whether the
// server has been listed at all, and whether it said its list changed since.
func (c *Catalog) Tools(server string) (tools []ToolInfo, known, stale bool) {
	t, known, stale := c.Snapshot().Tools(server)
	return append([]ToolInfo(nil), t...), known, stale
}

// Tools returns the tools last listed for server (read-only), whether it
// has been listed, and whether its list changed since.
func (s *Snapshot) Tools(server string) ([]ToolInfo, bool, bool) {
	st, ok := s.servers[server]
	if !ok || (st.tools == nil && st.stale) {
		return st.tools, ok && st.tools != nil, st.stale
	}
	return st.tools, ok, st.stale
}

// Exact returns the tools named exactly name, ordered by server.
func (s *Snapshot) Exact(name string) []ToolRef { return s.byName[name] }

// Normalized returns the tools whose NormalizeToolName equals that of name.
func (s *Snapshot) Normalized(name string) []ToolRef { return s.byNorm[NormalizeToolName(name)] }
