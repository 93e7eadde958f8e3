package tools

import (
	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// source is what the proxy tool reads without sending anything: every
// server's last published status, the time, and the catalog. A running
// runtime's actor system is one (liveSource); the other is the
// configuration and the disk cache read once (cachedSource), for a process
// that only wants to read them (NewCachedMCP).
type source interface {
	Statuses() []messages.ServerStatus
	Clock() clock.Clock
	// catalog returns the current catalog and its version, which increases
	// with every change.
	catalog() (uint64, serverCatalogs)
}

// serverCatalogs is one immutable state of the catalog: every server's
// entry (never nil; Source is SourceNone when nothing is known).
type serverCatalogs interface {
	Server(name string) *actors.ServerCatalog
}

// liveSource reads the actors' status board and catalog.
type liveSource struct{ *actors.System }

func (s liveSource) catalog() (uint64, serverCatalogs) {
	snap := s.Catalog().Snapshot()
	return snap.Version, snap
}

// cachedSource is the state of a runtime that has just started and
// connected nothing: every server idle (or disabled), its catalog what the
// disk cache holds for its identity.
type cachedSource struct {
	clk      clock.Clock
	statuses []messages.ServerStatus
	servers  cachedCatalogs
}

type cachedCatalogs map[string]*actors.ServerCatalog

func (c cachedCatalogs) Server(name string) *actors.ServerCatalog {
	if s := c[name]; s != nil {
		return s
	}
	return &actors.ServerCatalog{}
}

func (s *cachedSource) Statuses() []messages.ServerStatus { return s.statuses }
func (s *cachedSource) Clock() clock.Clock                { return s.clk }
func (s *cachedSource) catalog() (uint64, serverCatalogs) { return 1, s.servers }

// NewCachedMCP builds the proxy tool over the configuration and the disk
// cache alone (cache may be nil): no actor system, nothing connected, no
// goroutine. Its servers show as in a runtime that has just started with
// nothing to connect: disabled, cached (a valid cache entry for the
// server's identity hash) or not connected. Only ExecuteCached may be used:
// Execute refuses the modes that would connect a server.
func NewCachedMCP(opts Options, cache *catalog.CacheFile, clk clock.Clock) *MCP {
	clk = clock.Or(clk)
	src := &cachedSource{clk: clk, servers: cachedCatalogs{}}
	now := clk.Now()
	for _, s := range opts.Servers {
		state := messages.StateIdle
		if s.Disabled {
			state = messages.StateDisabled
		}
		src.statuses = append(src.statuses, messages.ServerStatus{Name: s.Name, State: state, ToolCount: -1})
		if cache == nil || s.Disabled {
			continue
		}
		if c, ok := cache.Lookup(s.Name, catalog.IdentityHash(s), now); ok {
			src.servers[s.Name] = &actors.ServerCatalog{Entry: catalog.CleanCached(c.Entry), Source: actors.SourceCache, ListedAt: c.CachedAtTime()}
		}
	}
	return newMCP(nil, src, opts, nil)
}

// newMCP builds the proxy tool over src; sys is nil for a cache view.
// names are the servers the actors know beside opts.Servers.
func newMCP(sys *actors.System, src source, opts Options, names []string) *MCP {
	cfg := &servers{byName: map[string]config.Server{}, set: opts.Settings}
	for _, s := range opts.Servers {
		cfg.order = append(cfg.order, s.Name)
		cfg.byName[s.Name] = s
	}
	for _, n := range names {
		if _, ok := cfg.byName[n]; !ok {
			cfg.order = append(cfg.order, n)
			cfg.byName[n] = config.Server{Name: n}
		}
	}
	return &MCP{sys: sys, src: src, cfg: cfg, opts: opts, limits: limitsFrom(opts.Settings.Output), results: newResultStore(opts, src.Clock())}
}
