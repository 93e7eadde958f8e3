package tools

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// Servers other members of a shared runtime's cluster run (remote/,
// docs/shared.md "Several members"). The member hands the proxy tool a
// Peers (SetPeers), which the tool asks, before a search, a describe or a
// call by a tool's name alone, for the servers the other live members'
// runtimes run, as their own proxy tools expose them (Exported). Their
// tools join the view as if the servers ran here: the same search index
// and ranking, the same resolution (a name two servers answer to is
// ambiguous wherever they run), marked with their server's name. They are
// read only: a call of one goes to Peers.Call, which forwards it; a server
// this runtime runs itself is never taken from a peer, and of two members
// running one server the first Peers names wins.

// PeerTool is one tool a runtime's proxy tool exposes: a server's tool, or
// one of its resources as a read_<name> tool.
type PeerTool struct {
	// Name is the tool's name on its server.
	Name string `json:"name"`
	// Prefixed is the name with the server's prefix, as that runtime's
	// configuration makes it.
	Prefixed string            `json:"prefixed,omitempty"`
	Tool     *catalog.Tool     `json:"tool,omitempty"`
	Resource *catalog.Resource `json:"resource,omitempty"`
}

// PeerServer is one enabled server of a runtime, as its proxy tool
// exposes it.
type PeerServer struct {
	Name string `json:"name"`
	// Known says its tools were listed (or read from the disk cache).
	Known        bool       `json:"known"`
	Tools        []PeerTool `json:"tools,omitempty"`
	Keywords     []string   `json:"keywords,omitempty"`
	Instructions string     `json:"instructions,omitempty"`
	// Member is where the server runs (set by the member that fetched it;
	// never sent).
	Member string `json:"-"`
}

// Peers is what the proxy tool asks of the members around its runtime.
// Both methods are called from the tool's callers' goroutines, at once.
type Peers interface {
	// Servers makes the other members' servers current within a bound
	// (and ctx) and returns them with a version that grows whenever they
	// change, and one note per member left out (it did not answer, or it
	// left), for the model. list has each member list its servers never
	// listed first, as a call by a tool's name alone does here.
	Servers(ctx context.Context, list bool) (version uint64, servers []PeerServer, notes []string)
	// Forward runs the proxy tool with args (which name server: a call of
	// one of its tools, a connect) on a member running server and returns
	// what that member's proxy tool answered.
	Forward(ctx context.Context, server string, args json.RawMessage) Result
}

type peerHook struct{ p Peers }

// peerState is what Peers offered last.
type peerState struct {
	version uint64
	servers []PeerServer
}

// SetPeers has the proxy tool offer the servers other members run (nil:
// none).
func (m *MCP) SetPeers(p Peers) {
	if p == nil {
		m.peers.Store(nil)
		m.peerCat.Store(nil)
		m.peerLinesUpdate()
		return
	}
	m.peers.Store(&peerHook{p})
}

// syncPeers asks the peers for their servers, when there are peers, and
// returns the notes on the members left out.
func (m *MCP) syncPeers(ctx context.Context, list bool) []string {
	h := m.peers.Load()
	if h == nil {
		return nil
	}
	version, servers, notes := h.p.Servers(ctx, list)
	for {
		cur := m.peerCat.Load()
		if cur != nil && cur.version >= version {
			// Nothing new: the description's lines stand once built
			// from cur (they change only with peerCat and the offers,
			// whose setters rebuild them), so a call does not rebuild
			// them.
			if !m.peerLinesFrom(cur) {
				m.peerLinesUpdate()
			}
			return notes
		}
		if m.peerCat.CompareAndSwap(cur, &peerState{version: version, servers: servers}) {
			m.peerLinesUpdate()
			return notes
		}
	}
}

// peerCall calls a peer's tool through Peers, as a call naming its
// server.
func (m *MCP) peerCall(ctx context.Context, e *entry, args []byte) Result {
	h := m.peers.Load()
	if h == nil {
		return failure(errNoPeers(e.Server))
	}
	if len(args) == 0 {
		args = []byte(`{}`)
	}
	a, err := json.Marshal(struct {
		Server string          `json:"server"`
		Tool   string          `json:"tool"`
		Args   json.RawMessage `json:"args"`
	}{e.Server, e.Name, args})
	if err != nil {
		return failure(messages.Errorf(messages.KindInvalidArgs, e.Server, "arguments: %s", err))
	}
	return h.p.Forward(ctx, e.Server, a)
}

// peerConnect connects a server another member runs, there; ok is false
// when no member offers server.
func (m *MCP) peerConnect(ctx context.Context, server string) (Result, bool) {
	h := m.peers.Load()
	if _, local := m.cfg.byName[server]; local || h == nil {
		return Result{}, false
	}
	notes := m.syncPeers(ctx, false)
	if _, ok := m.view().cfg.byName[server]; !ok {
		return Result{}, false
	}
	a, _ := json.Marshal(map[string]string{"connect": server, "server": server})
	return withNotes(h.p.Forward(ctx, server, a), notes), true
}

func errNoPeers(server string) *messages.Error {
	return messages.Errorf(messages.KindDisconnected, server, "server %q runs on another member, which this runtime no longer reaches", server)
}

// withNotes adds the notes on members left out to a result.
func withNotes(res Result, notes []string) Result {
	if len(notes) == 0 {
		return res
	}
	res.Text += "\nNot shown: " + strings.Join(notes, "; ") + "."
	if res.Details == nil {
		res.Details = map[string]any{}
	}
	res.Details["membersLeftOut"] = notes
	return res
}

// addPeers adds the peers' servers to the view, after this runtime's own.
func (v *view) addPeers(ps *peerState) {
	cfg := &servers{order: slices.Clone(v.cfg.order), byName: maps.Clone(v.cfg.byName), set: v.cfg.set}
	cats := map[string]*actors.ServerCatalog{}
	for i := range ps.servers {
		s := &ps.servers[i]
		if _, ok := cfg.byName[s.Name]; ok || s.Name == "" {
			continue
		}
		cfg.order = append(cfg.order, s.Name)
		cfg.byName[s.Name] = config.Server{Name: s.Name, SearchKeywords: s.Keywords}
		c := &actors.ServerCatalog{}
		if s.Known {
			c.Source = actors.SourceLive
			c.Instructions = s.Instructions
		}
		cats[s.Name] = c
		member := s.Member
		if member == "" {
			member = "another member"
		}
		for j := range s.Tools {
			t := &s.Tools[j]
			if t.Name == "" || (t.Tool == nil) == (t.Resource == nil) {
				continue
			}
			i := len(v.entries)
			v.entries = append(v.entries, entry{Server: s.Name, Name: t.Name, Prefixed: t.Prefixed, Tool: t.Tool, Resource: t.Resource, Member: member})
			v.byServer[s.Name] = append(v.byServer[s.Name], i)
			v.byName[t.Name] = append(v.byName[t.Name], i)
		}
	}
	v.cfg = cfg
	v.snap = peerCatalogs{v.snap, cats}
}

// peerCatalogs is a snapshot with the peers' servers' catalogs added.
type peerCatalogs struct {
	own   serverCatalogs
	peers map[string]*actors.ServerCatalog
}

func (p peerCatalogs) Server(name string) *actors.ServerCatalog {
	if c := p.peers[name]; c != nil {
		return c
	}
	return p.own.Server(name)
}

// Exported returns this runtime's own enabled servers as the proxy tool
// exposes them, in configuration order, with the catalog's version; same
// (and no servers) when the version is since. list first lists the
// servers never listed (each once, as resolving a tool's name alone does;
// a failed listing is not tried again).
func (m *MCP) Exported(ctx context.Context, list bool, since uint64) (version uint64, servers []PeerServer, same bool) {
	if list && m.sys != nil {
		v := m.view()
		var pending []string
		for _, s := range m.cfg.order {
			if !m.cfg.byName[s].Disabled && !v.snap.Server(s).Known() && !m.judged(s) {
				pending = append(pending, s)
			}
		}
		if len(pending) > 0 {
			m.refreshMany(ctx, pending)
			if ctx.Err() == nil {
				for _, s := range pending {
					m.tried.Store(s, true)
				}
			}
		}
	}
	v := m.view()
	if since != 0 && v.version == since {
		return v.version, nil, true
	}
	out := []PeerServer{}
	for _, name := range m.cfg.order {
		sc := m.cfg.byName[name]
		if sc.Disabled {
			continue
		}
		c := v.snap.Server(name)
		ps := PeerServer{Name: name, Known: c.Known(), Keywords: sc.SearchKeywords, Instructions: c.Instructions}
		for _, i := range v.byServer[name] {
			e := &v.entries[i]
			ps.Tools = append(ps.Tools, PeerTool{Name: e.Name, Prefixed: e.Prefixed, Tool: e.Tool, Resource: e.Resource})
		}
		out = append(out, ps)
	}
	return v.version, out, false
}
