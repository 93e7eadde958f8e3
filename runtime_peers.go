package mcprt

import (
	"context"

	"github.com/mcprt/mcprt/tools"
)

// The proxy tool across the members of a shared runtime's cluster
// (remote/, docs/shared.md "Several members"). A host does not call these:
// remote.Server does, for the runtime it serves.

// PeerServer is one server as a runtime's proxy tool exposes it.
type PeerServer = tools.PeerServer

// Peers offers the proxy tool the servers other members run.
type Peers = tools.Peers

// PeerStatus is a Peers that also merges the other members' statuses
// into the proxy tool's status mode.
type PeerStatus = tools.PeerStatus

// PeerRoute is a Peers that sends a call by a tool's name alone of a
// server the member withdrew to another member.
type PeerRoute = tools.PeerRoute

// ExportedServers returns the runtime's own enabled servers as its `mcp`
// tool exposes them (their tools, resource tools, search keywords and
// instructions), with the catalog's version; same (and no servers) when
// that version is since. list first lists the servers never listed, as an
// `mcp` call by a tool's name alone does.
func (r *Runtime) ExportedServers(ctx context.Context, list bool, since uint64) (version uint64, servers []PeerServer, same bool) {
	if r.mcp == nil {
		return 0, nil, false
	}
	return r.mcp.Exported(ctx, list, since)
}

// SetPeers has the runtime's `mcp` tool search, describe and call by a
// tool's name alone the servers other members run as well as its own.
func (r *Runtime) SetPeers(p Peers) {
	if r.mcp != nil {
		r.mcp.SetPeers(p)
	}
}

// PeerOffer is one server another live member offers, and where.
type PeerOffer = tools.PeerOffer

// SetPeerOffers gives the runtime's `mcp` tool the servers the other live
// members offer now (nil: none), for its description; when the
// description changes, WatchTools signals.
func (r *Runtime) SetPeerOffers(offers []PeerOffer) {
	if r.mcp != nil {
		r.mcp.SetPeerOffers(offers)
	}
}

// toolsChanged signals every WatchTools watcher: the `mcp` tool's
// description changed with the other members' servers. It never blocks.
func (r *Runtime) toolsChanged() {
	if !r.ready.Load() {
		return
	}
	w := &r.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.signalToolsLocked()
	}
}
