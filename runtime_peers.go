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
