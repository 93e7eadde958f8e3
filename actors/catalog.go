package actors

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
)

// Catalog is the in-memory record of every server's metadata (tools,
// resources, resource templates, prompts, instructions): seeded from the
// disk cache at start, replaced by each live listing. Server actors write
// it; tools and the embedding API read it without connecting anything.
//
// Concurrency: safe for concurrent use. Writers build a new immutable
// Snapshot (copy on write, serialised by mu); readers load the current one
// without locking.
type Catalog struct {
	mu       sync.Mutex // serialises writers
	snap     atomic.Pointer[Snapshot]
	onChange func() // called after every change, outside mu; set before any actor runs
}

// Source says where a server's catalog entry came from.
type Source int

const (
	// SourceNone: nothing is known (never listed, no valid cache entry).
	SourceNone Source = iota
	// SourceCache: read from the disk cache; no live listing since start.
	SourceCache
	// SourceLive: listed over a connection of this runtime.
	SourceLive
)

// ServerCatalog is one server's entry. It is immutable once published.
type ServerCatalog struct {
	catalog.Entry
	Source Source
	// ListedAt is when the metadata was listed (for a cached entry, when the
	// cache entry was written).
	ListedAt time.Time
	// Stale is set when the server said a list changed and no listing has
	// completed since.
	Stale bool
	// Err is why the last listing failed (e.g. a catalog limit), nil if it
	// did not.
	Err *messages.Error
	// Notes are diagnostics of sub-catalogs (resources, prompts) that failed
	// while the tools were listed fine.
	Notes []string
}

// Known reports whether the entry holds listed metadata.
func (c *ServerCatalog) Known() bool { return c != nil && c.Source != SourceNone }

// Snapshot is an immutable view of the catalog. Nothing it returns may be
// modified.
type Snapshot struct {
	// Version increases with every change.
	Version uint64
	servers map[string]*ServerCatalog
}

// Server returns server's entry (never nil; Source is SourceNone when
// nothing is known).
func (s *Snapshot) Server(name string) *ServerCatalog {
	if c := s.servers[name]; c != nil {
		return c
	}
	return &ServerCatalog{}
}

func newCatalog() *Catalog {
	c := &Catalog{}
	c.snap.Store(&Snapshot{servers: map[string]*ServerCatalog{}})
	return c
}

// Snapshot returns the current immutable view.
func (c *Catalog) Snapshot() *Snapshot { return c.snap.Load() }

// update replaces one server's entry.
func (c *Catalog) update(server string, f func(old ServerCatalog) ServerCatalog) {
	c.mu.Lock()
	old := c.snap.Load()
	next := &Snapshot{Version: old.Version + 1, servers: make(map[string]*ServerCatalog, len(old.servers)+1)}
	for k, v := range old.servers {
		next.servers[k] = v
	}
	prev := ServerCatalog{}
	if p := old.servers[server]; p != nil {
		prev = *p
	}
	entry := f(prev)
	next.servers[server] = &entry
	c.snap.Store(next)
	c.mu.Unlock()
	if c.onChange != nil {
		c.onChange()
	}
}

// seed records a cached entry at start.
func (c *Catalog) seed(server string, cs catalog.CachedServer) {
	c.update(server, func(ServerCatalog) ServerCatalog {
		return ServerCatalog{Entry: catalog.CleanCached(cs.Entry), Source: SourceCache, ListedAt: cs.CachedAtTime()}
	})
}

// setLive records a complete live listing.
func (c *Catalog) setLive(server string, e catalog.Entry, notes []string, at time.Time) {
	c.update(server, func(ServerCatalog) ServerCatalog {
		return ServerCatalog{Entry: e, Source: SourceLive, ListedAt: at, Notes: notes}
	})
}

// setTools records a live tools/list alone, keeping the rest of the entry.
func (c *Catalog) setTools(server string, tools []catalog.Tool, rejected []catalog.ToolRejection, at time.Time) {
	c.update(server, func(old ServerCatalog) ServerCatalog {
		old.Tools, old.Rejections, old.Source, old.ListedAt, old.Stale, old.Err = tools, rejected, SourceLive, at, false, nil
		return old
	})
}

// setFailed records a listing that failed for a reason that makes the
// metadata unusable (a catalog limit): the server's tools are withdrawn.
func (c *Catalog) setFailed(server string, err *messages.Error) {
	c.update(server, func(old ServerCatalog) ServerCatalog {
		return ServerCatalog{Source: SourceLive, Err: err, Entry: catalog.Entry{Instructions: old.Instructions}}
	})
}

// setListError records a listing that failed on a live connection for a
// reason that says nothing against the metadata already known (the catalog
// deadline, a pagination error, an error answer): the entry is kept, with
// err as the reason the latest listing failed.
func (c *Catalog) setListError(server string, err *messages.Error) {
	c.update(server, func(old ServerCatalog) ServerCatalog {
		old.Err = err
		return old
	})
}

// markStale records that a server's lists changed.
func (c *Catalog) markStale(server string) {
	c.update(server, func(old ServerCatalog) ServerCatalog {
		old.Stale = true
		return old
	})
}

// setInstructions records the instructions a handshake brought.
func (c *Catalog) setInstructions(server, text string) {
	if c.Snapshot().Server(server).Instructions == text {
		return
	}
	c.update(server, func(old ServerCatalog) ServerCatalog {
		old.Instructions = text
		return old
	})
}
