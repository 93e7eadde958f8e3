package remote

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"sync"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// Members reaching each other's servers: a member started with Peers
// attaches to each peer as a session of its own (with the peer's token,
// on demand, again after the peer was lost) and forwards a session's
// request that names a server it does not run to the peer that runs it.
// Membership is the static list of peers, each authenticated as any
// session is; requests a member forwards are never forwarded again, so
// members may name each other. docs/shared.md says what is forwarded.

// Peer is another member whose servers this member's sessions may use.
type Peer struct {
	// Addr is the peer's listening address (host:port).
	Addr string
	// TokenFile is the peer's token (default DefaultTokenFile(Addr)).
	TokenFile string
	// TLS is mutual TLS with the peer (nil: plaintext).
	TLS *ClientTLS
}

// peerLink is this member's session on one peer.
type peerLink struct {
	peer Peer

	mu sync.Mutex
	// The fields below are guarded by mu.
	s       *Session // nil before the first attach or after the peer was lost
	servers []string // the servers the peer ran when last reached
}

// session returns a live session on the peer, attaching when there is
// none.
func (p *peerLink) session(ctx context.Context, srv *Server) (*Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.s != nil && p.s.alive() {
		return p.s, nil
	}
	if p.s != nil {
		_ = p.s.Close()
		p.s = nil
	}
	// The peer answers at an address of this member's own interface (the
	// one it was told to listen on), not at loopback, which is the peer's.
	host, _, _ := net.SplitHostPort(srv.Addr())
	s, err := Attach(ctx, p.peer.Addr, AttachOptions{TokenFile: p.peer.TokenFile, Client: srv.ClientHooks(), Logger: srv.logger, Host: peerHost{srv.router},
		Listen: net.JoinHostPort(host, "0"), TLS: p.peer.TLS, Plaintext: srv.opts.Plaintext, member: true})
	if err != nil {
		return nil, err
	}
	var names []string
	if b, err := s.request(ctx, opServers, "", nil); err == nil {
		_ = json.Unmarshal(b, &names)
	}
	p.s, p.servers = s, names
	return s, nil
}

// runs reports whether the peer ran server when last reached.
func (p *peerLink) runs(server string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.servers, server)
}

func (p *peerLink) close() {
	p.mu.Lock()
	s := p.s
	p.s = nil
	p.mu.Unlock()
	if s != nil {
		_ = s.Close()
	}
}

// forwardTo finds the peer running server, a server this member does not
// run; nil when no peer does (the local runtime then says so). A peer
// that ran it and cannot be reached now is an error naming both.
func (s *Server) forwardTo(ctx context.Context, server string) (*peerLink, *Session, error) {
	for _, p := range s.peers {
		known := p.runs(server)
		ps, err := p.session(ctx, s)
		if err != nil {
			if known {
				return nil, nil, messages.Errorf(messages.KindDisconnected, server, "server %q runs on the member at %s, which cannot be reached now: %s", server, p.peer.Addr, err)
			}
			continue
		}
		if p.runs(server) {
			return p, ps, nil
		}
	}
	return nil, nil, nil
}

// routedServer is the server a request names for forwarding ("" for
// none).
func routedServer(m *requestMsg) string {
	switch m.Op {
	case opServerTools, opServerResources, opServerTemplates, opServerPrompts:
		return m.Name
	}
	server, _ := requestServer(m)
	return server
}

// forward runs m on the peer running the server it names, when that is
// not this member; handled is false when m is this member's to run. sub
// is the subscription a forwarded subscribe made.
func (s *Server) forward(ctx context.Context, m *requestMsg) (result json.RawMessage, sub string, handled bool, err error) {
	if len(s.peers) == 0 {
		return nil, "", false, nil
	}
	switch m.Op {
	case opServers, opServerStatuses:
		b, handled, err := s.merged(ctx, m)
		return b, "", handled, err
	case opStatus:
		b, handled, err := s.mergedStatus(ctx)
		return b, "", handled, err
	}
	if m.Op == opTool && m.Name == eventsTool {
		if b, handled, err := s.forwardEvents(ctx, m); handled {
			return b, "", true, err
		}
	}
	server := routedServer(m)
	if server == "" || slices.Contains(s.rt.Servers(), server) {
		return nil, "", false, nil
	}
	p, ps, err := s.forwardTo(ctx, server)
	if ps == nil && err == nil {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", true, err
	}
	b, err := ps.request(ctx, m.Op, m.Name, m.Args)
	if err == nil && m.Op == opTool && m.Name == eventsTool {
		var res mcprt.Result
		if json.Unmarshal(b, &res) == nil && !res.IsError {
			if sub = subscribed(res); sub != "" {
				s.peerSubs.note(sub, p)
			}
		}
	}
	return b, sub, true, err
}

// merged answers Servers and ServerStatuses with this member's and every
// reachable peer's (a peer that cannot be reached is left out).
func (s *Server) merged(ctx context.Context, m *requestMsg) (json.RawMessage, bool, error) {
	var local any
	if m.Op == opServers {
		local = s.rt.Servers()
	} else {
		local = s.rt.ServerStatuses()
	}
	b, err := json.Marshal(local)
	if err != nil {
		return nil, true, err
	}
	var all []json.RawMessage
	_ = json.Unmarshal(b, &all)
	for _, p := range s.peers {
		ps, err := p.session(ctx, s)
		if err != nil {
			continue
		}
		var theirs []json.RawMessage
		if pb, err := ps.request(ctx, m.Op, "", nil); err == nil && json.Unmarshal(pb, &theirs) == nil {
			all = append(all, theirs...)
		}
	}
	if all == nil {
		all = []json.RawMessage{}
	}
	out, err := json.Marshal(all)
	return out, true, err
}

// mergedStatus is this member's status with every peer's: a reachable
// peer's servers as it reports them, an unreachable one's last known
// servers as failed, naming it.
func (s *Server) mergedStatus(ctx context.Context) (json.RawMessage, bool, error) {
	st := s.rt.Status()
	for _, p := range s.peers {
		ps, err := p.session(ctx, s)
		if err != nil {
			p.mu.Lock()
			names := append([]string(nil), p.servers...)
			p.mu.Unlock()
			for _, name := range names {
				st.Servers = append(st.Servers, mcprt.ServerStatus{Name: name, Status: "failed",
					LastError: "the member at " + p.peer.Addr + " that runs it cannot be reached"})
			}
			continue
		}
		theirs := ps.Status()
		st.Servers = append(st.Servers, theirs.Servers...)
		st.TotalTools += theirs.TotalTools
		st.TotalResources += theirs.TotalResources
		st.ConnectedCount += theirs.ConnectedCount
		st.DisabledCount += theirs.DisabledCount
		st.Skipped = append(st.Skipped, theirs.Skipped...)
	}
	b, err := json.Marshal(st)
	return b, true, err
}
