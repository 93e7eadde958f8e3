package remote

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"sync"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// Members reaching each other's servers: a member attaches to another
// member as a session of its own (with the token that member announced
// in the membership, on demand, again after it was lost) and forwards a
// session's request that names a server it does not run to a live member
// that runs it (cluster.go, membership.go). Requests a member forwards
// are never forwarded again. docs/shared.md says what is forwarded.

// Peer is a member of the cluster to join: a seed of the membership.
type Peer struct {
	// Addr is the member's listening address (host:port).
	Addr string
}

// peerLink is this member's session on another member.
type peerLink struct {
	addr string
	tls  *ClientTLS

	mu sync.Mutex
	// The fields below are guarded by mu.
	token   string   // the member's own token, as it announced it
	s       *Session // nil before the first attach or after the member was lost
	servers []string // the servers the member announced last
}

// session returns a live session on the member, attaching when there is
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
	// The member answers at an address of this member's own interface
	// (the one it was told to listen on), not at loopback, which is the
	// other's.
	host, _, _ := net.SplitHostPort(srv.Addr())
	s, err := Attach(ctx, p.addr, AttachOptions{token: p.token, Client: srv.ClientHooks(), Logger: srv.logger, Host: peerHost{srv.router},
		Listen: net.JoinHostPort(host, "0"), TLS: p.tls, Plaintext: srv.opts.Plaintext, member: true})
	if err != nil {
		return nil, err
	}
	p.s = s
	return s, nil
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

// forwardTo finds a live member running server, a server this member
// does not run, trying them in the membership's order until one can be
// reached; nil when no member runs it (the local runtime then says so).
// When the members running it cannot be reached, or left, the error
// names them.
func (s *Server) forwardTo(ctx context.Context, server string) (*peerLink, *Session, error) {
	var tried []string
	var last error
	for _, m := range s.member.running(server) {
		p := s.link(m)
		ps, err := p.session(ctx, s)
		if err == nil {
			return p, ps, nil
		}
		tried, last = append(tried, m.Addr), err
	}
	if last != nil {
		return nil, nil, messages.Errorf(messages.KindDisconnected, server, "server %q runs on the member at %s, which cannot be reached now: %s", server, strings.Join(tried, ", "), last)
	}
	if gone := s.member.gone(server); len(gone) > 0 {
		return nil, nil, messages.Errorf(messages.KindDisconnected, server, "server %q runs on the member at %s, which cannot be reached now (it left the cluster) and no other member runs it", server, gone[0].Addr)
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
	if s.member == nil || s.member.alone() {
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
// reachable live member's (one that cannot be reached is left out; a
// server that several members run is listed once, this member's first).
func (s *Server) merged(ctx context.Context, m *requestMsg) (json.RawMessage, bool, error) {
	if m.Op == opServers {
		names := s.rt.Servers()
		for _, p := range s.livePeers() {
			ps, err := p.session(ctx, s)
			if err != nil {
				continue
			}
			var theirs []string
			if b, err := ps.request(ctx, m.Op, "", nil); err == nil && json.Unmarshal(b, &theirs) == nil {
				for _, n := range theirs {
					if !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
		}
		b, err := json.Marshal(names)
		return b, true, err
	}
	all := s.rt.ServerStatuses()
	for _, p := range s.livePeers() {
		ps, err := p.session(ctx, s)
		if err != nil {
			continue
		}
		var theirs []messages.ServerStatus
		if b, err := ps.request(ctx, m.Op, "", nil); err == nil && json.Unmarshal(b, &theirs) == nil {
			for _, st := range theirs {
				if !slices.ContainsFunc(all, func(o messages.ServerStatus) bool { return o.Name == st.Name }) {
					all = append(all, st)
				}
			}
		}
	}
	b, err := json.Marshal(all)
	return b, true, err
}

// mergedStatus is this member's status with every live member's: a
// reachable member's servers as it reports them, the servers of one that
// cannot be reached or that left as failed, naming it (unless another
// member runs them). A server several members run is listed once.
func (s *Server) mergedStatus(ctx context.Context) (json.RawMessage, bool, error) {
	st := s.rt.Status()
	listed := func(name string) bool {
		return slices.ContainsFunc(st.Servers, func(o mcprt.ServerStatus) bool { return o.Name == name })
	}
	var down []mcprt.ServerStatus
	for _, p := range s.livePeers() {
		ps, err := p.session(ctx, s)
		if err != nil {
			p.mu.Lock()
			names := append([]string(nil), p.servers...)
			p.mu.Unlock()
			for _, name := range names {
				down = append(down, mcprt.ServerStatus{Name: name, Status: "failed",
					LastError: "the member at " + p.addr + " that runs it cannot be reached"})
			}
			continue
		}
		theirs := ps.Status()
		for _, ss := range theirs.Servers {
			if !listed(ss.Name) {
				st.Servers = append(st.Servers, ss)
			}
		}
		st.TotalTools += theirs.TotalTools
		st.TotalResources += theirs.TotalResources
		st.ConnectedCount += theirs.ConnectedCount
		st.DisabledCount += theirs.DisabledCount
		st.Skipped = append(st.Skipped, theirs.Skipped...)
	}
	for _, m := range s.member.gone("") {
		for _, name := range m.Servers {
			down = append(down, mcprt.ServerStatus{Name: name, Status: "failed",
				LastError: "the member at " + m.Addr + " that runs it cannot be reached (it left the cluster)"})
		}
	}
	for _, d := range down {
		if !listed(d.Name) {
			st.Servers = append(st.Servers, d)
		}
	}
	b, err := json.Marshal(st)
	return b, true, err
}
