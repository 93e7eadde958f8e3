package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// The `mcp` tool across members: a member's `mcp` search, describe and
// call by a tool's name alone cover the servers the other live members
// run (tools/peers.go). Before each, the member asks every live member,
// through its session there and at once, for its own servers as its `mcp`
// tool exposes them (opPeerCatalog; the answer is only "same" when that
// member's catalog has not changed since the version this member holds).
// A member that does not answer within PeerCatalogBound (PeerListBound
// for a call, which has it list its servers first), or cannot be
// reached, is left out of that answer with a note naming its servers; so
// are the servers of a member that left. A call of a peer's tool is
// forwarded as an `mcp` call naming its server. docs/shared.md, "Several
// members".

// opPeerCatalog asks a member for its own servers as its `mcp` tool
// exposes them (never forwarded).
const opPeerCatalog = "peerCatalog"

// PeerCatalogBound is how long an `mcp` search or describe waits for the
// other members' catalogs.
const PeerCatalogBound = 2 * time.Second

// PeerListBound is how long an `mcp` call by a tool's name alone waits for
// them: each member first lists its servers never listed, which starts
// them (as the call would here).
const PeerListBound = 30 * time.Second

// maxPeerCatalog bounds the catalog one member sends (the catalog's own
// limits keep a server's far below it).
const maxPeerCatalog = 16 << 20

// peerCatalogArgs are opPeerCatalog's arguments.
type peerCatalogArgs struct {
	// Since is the version the asker holds (0: none).
	Since uint64 `json:"since,omitempty"`
	// List has the member list its servers never listed first.
	List bool `json:"list,omitempty"`
}

// peerCatalogReply is opPeerCatalog's answer.
type peerCatalogReply struct {
	Version uint64 `json:"version"`
	// Same says the catalog is the one of version Since (Servers is then
	// empty).
	Same    bool               `json:"same,omitempty"`
	Servers []mcprt.PeerServer `json:"servers,omitempty"`
}

// executePeerCatalog answers opPeerCatalog; ok is false for any other
// operation.
func (s *Server) executePeerCatalog(ctx context.Context, m *requestMsg) (out any, ok bool, err error) {
	if m.Op != opPeerCatalog {
		return nil, false, nil
	}
	var a peerCatalogArgs
	if len(m.Args) > 0 {
		if err := json.Unmarshal(m.Args, &a); err != nil {
			return nil, true, messages.Errorf(messages.KindInvalidArgs, "", "peerCatalog arguments: %s", err)
		}
	}
	version, servers, same := s.rt.ExportedServers(ctx, a.List, a.Since)
	return peerCatalogReply{Version: version, Same: same, Servers: servers}, true, nil
}

// forwardedKey marks the context of a request another member forwarded:
// the `mcp` tool does not pass it on again.
type forwardedKey struct{}

func forwarded(ctx context.Context) context.Context {
	return context.WithValue(ctx, forwardedKey{}, true)
}

func isForwarded(ctx context.Context) bool { return ctx.Value(forwardedKey{}) != nil }

// peerCatalogs holds the catalogs fetched from the other members.
type peerCatalogs struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	by      map[string]peerCatalogReply // by member id
	version uint64                      // grows whenever what servers returns changes
	shown   string                      // the member ids and versions last returned
	last    []mcprt.PeerServer          // what was returned last
}

// peersOf is the member's mcprt.Peers: the `mcp` tool's view of the other
// members' servers.
type peersOf struct{ s *Server }

var _ mcprt.Peers = peersOf{}

// fetched is one member's answer.
type fetched struct {
	m   memberInfo
	r   peerCatalogReply
	err error
}

// Servers fetches every live member's catalog at once, within the bound,
// and merges them (members by address, a server once).
func (p peersOf) Servers(ctx context.Context, list bool) (uint64, []mcprt.PeerServer, []string) {
	s := p.s
	c := &s.peerCat
	if isForwarded(ctx) || s.member == nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.version, c.last, nil
	}
	live := s.member.live()
	got := map[string]fetched{}
	if len(live) > 0 {
		s.fetchCatalogs(ctx, live, list, got)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[string]peerCatalogReply{}
	}
	var servers []mcprt.PeerServer
	var shown []string
	var notes []string
	own := s.rt.Servers()
	have := func(name string) bool {
		return slices.Contains(own, name) || slices.ContainsFunc(servers, func(o mcprt.PeerServer) bool { return o.Name == name })
	}
	var failed []fetched
	for _, m := range live {
		f := got[m.ID]
		if f.err != nil {
			failed = append(failed, f)
			continue
		}
		if !f.r.Same {
			c.by[m.ID] = f.r
		}
		r := c.by[m.ID]
		shown = append(shown, fmt.Sprintf("%s@%d:%s", m.ID, r.Version, strings.Join(m.Servers, ",")))
		for _, ps := range r.Servers {
			// Only what it offers (offers.go): a server it withdrew is
			// reached on another member, or not at all.
			if slices.Contains(m.Servers, ps.Name) && !have(ps.Name) {
				ps.Member = m.Addr
				servers = append(servers, ps)
			}
		}
	}
	missing := func(names []string) []string {
		return slices.DeleteFunc(slices.Clone(names), have)
	}
	for _, f := range failed {
		if names := missing(f.m.Servers); len(names) > 0 {
			notes = append(notes, fmt.Sprintf("the tools of %s on the member at %s, which cannot be reached now (%s)", strings.Join(names, ", "), f.m.Addr, f.err))
		}
	}
	for _, m := range s.member.gone("") {
		if names := missing(m.Servers); len(names) > 0 {
			notes = append(notes, fmt.Sprintf("the tools of %s on the member at %s, which left the cluster", strings.Join(names, ", "), m.Addr))
		}
	}
	// Forget the catalogs of members no longer live.
	for id := range c.by {
		if !slices.ContainsFunc(live, func(m memberInfo) bool { return m.ID == id }) {
			delete(c.by, id)
		}
	}
	if key := strings.Join(shown, " "); key != c.shown || c.version == 0 {
		c.shown, c.last = key, servers
		c.version++
	}
	return c.version, c.last, notes
}

// fetchCatalogs asks the members at once, waiting at most the bound:
// one that has not answered by then is left out.
func (s *Server) fetchCatalogs(ctx context.Context, live []memberInfo, list bool, got map[string]fetched) {
	bound := PeerCatalogBound
	if list {
		bound = PeerListBound
	}
	rs, errs := askAll(ctx, s.clock, len(live), bound, "the call ended first",
		func(ctx context.Context, i int) (peerCatalogReply, error) { return s.fetchCatalog(ctx, live[i], list) })
	for i, m := range live {
		got[m.ID] = fetched{m: m, r: rs[i], err: errs[i]}
	}
}

// fetchCatalog asks one member for its catalog, with the version held.
func (s *Server) fetchCatalog(ctx context.Context, m memberInfo, list bool) (peerCatalogReply, error) {
	ps, err := s.link(m).session(ctx, s)
	if err != nil {
		return peerCatalogReply{}, err
	}
	s.peerCat.mu.Lock()
	since := s.peerCat.by[m.ID].Version
	s.peerCat.mu.Unlock()
	args, _ := json.Marshal(peerCatalogArgs{Since: since, List: list})
	b, err := ps.request(ctx, opPeerCatalog, "", args)
	if err != nil {
		return peerCatalogReply{}, err
	}
	if len(b) > maxPeerCatalog {
		return peerCatalogReply{}, fmt.Errorf("its catalog is over %d MiB", maxPeerCatalog>>20)
	}
	var r peerCatalogReply
	if err := json.Unmarshal(b, &r); err != nil {
		return peerCatalogReply{}, fmt.Errorf("its catalog is malformed: %w", err)
	}
	if r.Same && r.Version != since {
		return peerCatalogReply{}, fmt.Errorf("its catalog is malformed: version %d is not the one held", r.Version)
	}
	return r, nil
}

var _ mcprt.PeerRoute = peersOf{}

// Elsewhere reports whether an `mcp` call by a tool's name alone of
// server, which this member configures, goes to the other members, as a
// call naming the server does (peers.go, here): while this member has
// withdrawn it. A request another member forwarded runs here.
func (p peersOf) Elsewhere(ctx context.Context, server string) bool {
	s := p.s
	if isForwarded(ctx) || s.member == nil || s.member.alone() {
		return false
	}
	return !s.offers.offered(server)
}

// Forward runs an `mcp` call (args name server) as a session's call
// naming server is forwarded (peers.go): on the live members that offer
// it, in the membership's order.
func (p peersOf) Forward(ctx context.Context, server string, args json.RawMessage) mcprt.Result {
	s := p.s
	if isForwarded(ctx) || s.member == nil {
		return failure(messages.Errorf(messages.KindServerNotFound, server, "server %q runs on another member (a request a member forwarded is not forwarded again)", server))
	}
	b, _, handled, err := s.forward(ctx, &requestMsg{Op: opTool, Name: mcprt.MCPToolName, Args: args})
	if !handled {
		return failure(messages.Errorf(messages.KindDisconnected, server, "server %q runs on another member, and no live member offers it now", server))
	}
	return renderedResult(b, err)
}

// peerOffers gives the runtime's `mcp` tool the servers the other live
// members offer, for its description (the membership's knowledge: no
// round trip); the runtime tells the sessions when the description
// changed.
func (s *Server) peerOffers() {
	own := s.rt.Servers()
	offers := []mcprt.PeerOffer{}
	for _, m := range s.member.live() {
		for _, name := range m.Servers {
			if !slices.Contains(own, name) && !slices.ContainsFunc(offers, func(o mcprt.PeerOffer) bool { return o.Server == name }) {
				offers = append(offers, mcprt.PeerOffer{Server: name, Member: m.Addr})
			}
		}
	}
	s.rt.SetPeerOffers(offers)
}
