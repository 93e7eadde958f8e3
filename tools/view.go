package tools

import (
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/config"
)

// entry is one tool the runtime exposes: a server's tool, or one of its
// resources as a read_<name> tool, after includeTools/excludeTools.
type entry struct {
	Server string
	// Name is the tool's name on its server (for a resource tool, its
	// read_<name>).
	Name string
	// Prefixed is the name with the server's prefix (the direct-tool name
	// before collision handling), which filters and resolution also match.
	Prefixed string
	Tool     *catalog.Tool     // nil for a resource tool
	Resource *catalog.Resource // set for a resource tool
	// Member is where a server another member runs is (peers.go); "" for
	// this runtime's own servers.
	Member string
}

// Description returns the tool's description (a resource's for a resource
// tool).
func (e *entry) Description() string {
	if e.Resource != nil {
		d := "Read the resource " + catalog.CleanText(e.Resource.URI)
		if e.Resource.Description != "" {
			d += ": " + e.Resource.Description
		}
		return d
	}
	return e.Tool.Description
}

// view is what the tools see of one catalog snapshot: the exposed tools of
// every server, with name indexes and (built on first search) the search
// index. It is immutable; a new one is built when the catalog changes.
type view struct {
	version  uint64
	peers    *peerState // the peers' servers it was built with (nil: none)
	snap     serverCatalogs
	cfg      *servers // the configuration, with the peers' servers added
	entries  []entry
	byServer map[string][]int
	byName   map[string][]int // a tool's own name → entries, by server order

	// The resolution indexes (resolve.go), built on the first lookup: a
	// status or a list never needs them.
	namesOnce sync.Once
	byExact   map[string][]int // every exact spelling → entries
	byCanon   map[string][]int // every canonical spelling → entries

	indexOnce sync.Once
	index     *catalog.Index
}

// servers is the configuration the tools need, by server name.
type servers struct {
	order  []string
	byName map[string]config.Server
	set    config.Settings
}

func (s *servers) prefixMode(name string) string {
	if p := s.byName[name].ToolPrefix; p != "" {
		return p
	}
	if s.set.ToolPrefix != "" {
		return s.set.ToolPrefix
	}
	return catalog.PrefixServer
}

// views memoises the view of the latest catalog snapshot.
type views struct {
	cur atomic.Pointer[view]
}

// get returns the view of the current snapshot, building it if the catalog
// changed since the last one.
func (vs *views) get(src source, cfg *servers, peers *peerState) *view {
	version, snap := src.catalog()
	if v := vs.cur.Load(); v != nil && v.version == version && v.peers == peers {
		return v
	}
	v := buildView(version, snap, cfg)
	if peers != nil {
		v.addPeers(peers)
	}
	v.peers = peers
	vs.cur.Store(v)
	return v
}

func buildView(version uint64, snap serverCatalogs, cfg *servers) *view {
	v := &view{version: version, snap: snap, cfg: cfg, byServer: map[string][]int{}, byName: map[string][]int{}}
	for _, name := range cfg.order {
		sc := cfg.byName[name]
		c := snap.Server(name)
		if !c.Known() || sc.Disabled {
			continue
		}
		mode := cfg.prefixMode(name)
		add := func(e entry) {
			if !catalog.Exposed(sc.IncludeTools, sc.ExcludeTools, e.Name, e.Prefixed) {
				return
			}
			i := len(v.entries)
			v.entries = append(v.entries, e)
			v.byServer[name] = append(v.byServer[name], i)
			v.byName[e.Name] = append(v.byName[e.Name], i)
		}
		for i := range c.Tools {
			t := &c.Tools[i]
			prefixed, _ := catalog.DirectName(name, mode, t.Name)
			add(entry{Server: name, Name: t.Name, Prefixed: prefixed, Tool: t})
		}
		if catalog.ExposesResources(sc) {
			taken := make(map[string]bool, len(c.Tools))
			for i := range c.Tools {
				taken[c.Tools[i].Name] = true
			}
			names := catalog.ResourceToolNames(c.Resources, taken)
			for i := range c.Resources {
				r := &c.Resources[i]
				rn := names[i]
				prefixed, _ := catalog.DirectName(name, mode, rn)
				add(entry{Server: name, Name: rn, Prefixed: prefixed, Resource: r})
			}
		}
	}
	return v
}

// nameIndexes builds the resolution indexes once.
func (v *view) nameIndexes() {
	v.namesOnce.Do(func() {
		v.byExact, v.byCanon = map[string][]int{}, map[string][]int{}
		for i := range v.entries {
			exact, canon := spellings(&v.entries[i])
			for _, n := range exact {
				v.byExact[n] = append(v.byExact[n], i)
			}
			for _, n := range canon {
				v.byCanon[n] = append(v.byCanon[n], i)
			}
		}
	})
}

// searchIndex returns the view's search index, building it once.
func (v *view) searchIndex() *catalog.Index {
	cfg := v.cfg
	v.indexOnce.Do(func() {
		docs := make([]catalog.Doc, len(v.entries))
		for i := range v.entries {
			e := &v.entries[i]
			docs[i] = catalog.Doc{Server: e.Server, Name: e.Name, Description: e.Description(), Keywords: cfg.byName[e.Server].SearchKeywords}
		}
		v.index = catalog.NewIndex(docs)
	})
	return v.index
}

// count returns how many tools server exposes, and whether its catalog is
// known at all.
func (v *view) count(server string) (int, bool) {
	return len(v.byServer[server]), v.snap.Server(server).Known()
}
