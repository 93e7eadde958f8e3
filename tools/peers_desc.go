package tools

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// The other members' servers in the proxy tool's description: a model on
// a session attached to a member that runs few servers (or none) learns
// from the description alone that more are reachable, and searches. The
// names come from the membership (SetPeerOffers: which live member offers
// which server, known without a round trip); the tool counts and the head
// of the instructions from the last catalog the peers sent (peerCat),
// once a search, describe or call fetched it. The lines are rebuilt when
// either changes, and when they read differently PeerGen grows and the
// hook set with SetPeersChanged runs, so the runtime rebuilds its tool
// surface and tells its hosts to read the tools again.

// maxPeerServersShown bounds how many of the other members' servers the
// description lists (the rest are counted on one line).
const maxPeerServersShown = 24

// PeerOffer is one server another live member offers, as the membership
// knows it.
type PeerOffer struct {
	// Server is the server's name; Member is where it runs (the member's
	// address).
	Server, Member string
}

// peerDesc is what the description shows of the other members' servers.
type peerDesc struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	offers  []PeerOffer
	set     bool // SetPeerOffers was called: offers, not peerCat, says who offers what
	lines   string
	from    *peerState // the peers' catalog the lines were last built from
	gen     uint64
	changed func()
}

// SetPeerOffers gives the proxy tool the servers the other live members
// offer now (nil: none), for its description.
func (m *MCP) SetPeerOffers(offers []PeerOffer) {
	d := &m.pdesc
	d.mu.Lock()
	d.offers, d.set = slices.Clone(offers), offers != nil
	d.mu.Unlock()
	m.peerLinesUpdate()
}

// SetPeersChanged sets the hook run (on the caller's goroutine, with no
// lock of the tool's held) whenever the description's lines on the other
// members' servers change.
func (m *MCP) SetPeersChanged(f func()) {
	m.pdesc.mu.Lock()
	m.pdesc.changed = f
	m.pdesc.mu.Unlock()
}

// PeerGen grows whenever the description's lines on the other members'
// servers change.
func (m *MCP) PeerGen() uint64 {
	m.pdesc.mu.Lock()
	defer m.pdesc.mu.Unlock()
	return m.pdesc.gen
}

// peerLinesUpdate rebuilds the description's lines on the other members'
// servers and runs the hook when they changed.
func (m *MCP) peerLinesUpdate() {
	d := &m.pdesc
	ps := m.peerCat.Load()
	d.mu.Lock()
	lines := m.peerLines(d.offers, d.set, ps)
	d.from = ps
	if lines == d.lines {
		d.mu.Unlock()
		return
	}
	d.lines = lines
	d.gen++
	f := d.changed
	d.mu.Unlock()
	if f != nil {
		f()
	}
}

// peerLinesFrom reports whether the description's lines on the other
// members' servers were last built from the peers' catalog ps.
func (m *MCP) peerLinesFrom(ps *peerState) bool {
	m.pdesc.mu.Lock()
	defer m.pdesc.mu.Unlock()
	return m.pdesc.from == ps
}

// peerLinesNow returns the description's lines on the other members'
// servers.
func (m *MCP) peerLinesNow() string {
	m.pdesc.mu.Lock()
	defer m.pdesc.mu.Unlock()
	return m.pdesc.lines
}

// peerLines lists the other members' servers that this runtime does not
// configure: those offered (or, before the membership said, those in the
// peers' last catalog), each once, with its tool count when the catalog
// has it.
func (m *MCP) peerLines(offers []PeerOffer, set bool, ps *peerState) string {
	cat := map[string]*PeerServer{}
	if ps != nil {
		for i := range ps.servers {
			if s := &ps.servers[i]; cat[s.Name] == nil {
				cat[s.Name] = s
			}
		}
	}
	if !set && ps != nil {
		for _, s := range ps.servers {
			offers = append(offers, PeerOffer{Server: s.Name, Member: s.Member})
		}
	}
	var b strings.Builder
	seen := map[string]bool{}
	shown, more := 0, 0
	for _, o := range offers {
		if _, own := m.cfg.byName[o.Server]; own || o.Server == "" || seen[o.Server] {
			continue
		}
		seen[o.Server] = true
		if shown == maxPeerServersShown {
			more++
			continue
		}
		shown++
		where := "on another member"
		if o.Member != "" {
			where = "on the member at " + o.Member
		}
		s := cat[o.Server]
		switch {
		case s != nil && s.Known:
			fmt.Fprintf(&b, "\n- %s (%d tools, %s)", o.Server, len(s.Tools), where)
		default:
			fmt.Fprintf(&b, "\n- %s (tools not listed yet, %s)", o.Server, where)
		}
		if s != nil && s.Instructions != "" {
			fmt.Fprintf(&b, ": %s", clip(oneLine(s.Instructions), instructionsHead))
		}
	}
	if more > 0 {
		fmt.Fprintf(&b, "\n- and %d more servers on other members: {\"search\": \"words\"} finds their tools", more)
	}
	return b.String()
}
