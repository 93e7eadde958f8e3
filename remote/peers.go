package remote

import (
	"context"
	"encoding/json"
	"fmt"
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

// peerFor is this member's session on a member offering server, for a
// typed subscription or a protocol session that is not this member's to
// run: server is not configured here, or it is but is withdrawn here (it
// failed) while another member offers it. nil (and no error) means run it
// here; for a server configured here, peers that cannot be reached leave
// it here too (the local run then says what is wrong).
func (s *Server) peerFor(ctx context.Context, server string) (*Session, error) {
	if s.member == nil || s.member.alone() {
		return nil, nil
	}
	local := slices.Contains(s.rt.Servers(), server)
	if local && s.offers.offered(server) {
		return nil, nil
	}
	ps, err := s.forwardTo(ctx, server)
	if local && err != nil {
		return nil, nil
	}
	return ps, err
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

// forward runs m where it belongs when that is not simply here; handled
// is false when m is this member's to run. sub is the subscription a
// forwarded subscribe made.
//
// A server this member does not configure runs on the live members that
// offer it, in the membership's order. One it configures runs here while
// it offers it (an explicit connect always tries here first); when that
// run never reached the server (its connect failed, supervisor.Unreached)
// or the server is withdrawn here (it failed), the request goes to the
// live members that offer it, and the local failure stands only when none
// of them serves it.
func (s *Server) forward(ctx context.Context, m *requestMsg) (result json.RawMessage, sub string, handled bool, err error) {
	if s.member == nil || s.member.alone() {
		return nil, "", false, nil
	}
	switch m.Op {
	case opServers, opServerStatuses:
		b, err := s.merged(ctx, m)
		return b, "", true, err
	case opStatus:
		b, err := json.Marshal(s.mergedStatusOf(ctx))
		return b, "", true, err
	}
	if m.Op == opTool && m.Name == eventsTool {
		if b, handled, err := s.forwardEvents(ctx, m); handled {
			return b, "", true, err
		}
	}
	server := routedServer(m)
	if server == "" {
		return nil, "", false, nil
	}
	if slices.Contains(s.rt.Servers(), server) {
		o := s.here(ctx, m, server)
		return o.b, o.sub, true, o.err
	}
	o, ok, failed, down := s.onPeers(ctx, m, server)
	switch {
	case ok:
	case failed != nil:
		o = *failed
		if down != nil {
			o.b, o.err = note(m, o.b, o.err, "the member at "+down.Error())
		}
	case down != nil:
		o.err = messages.Errorf(messages.KindDisconnected, server, "server %q runs on the member at %s", server, down)
	default:
		if err := s.leftErr(server); err != nil {
			return nil, "", true, err
		}
		return nil, "", false, nil // no member runs it: the local runtime says so
	}
	return o.b, o.sub, true, o.err
}

// outcome is a request's answer.
type outcome struct {
	b   json.RawMessage
	sub string
	err error
}

// here runs m, naming server, which this member configures: here while
// it offers it, else on another member that offers it, the local run's
// failure standing when no other member serves it (with the members that
// could not be reached named).
func (s *Server) here(ctx context.Context, m *requestMsg, server string) outcome {
	local := func() outcome {
		b, sub, err := s.execute(ctx, m, true)
		s.withdraw(m, b, err)
		return outcome{b, sub, err}
	}
	var o outcome
	ran := s.offers.offered(server) || m.Op == opConnect
	if ran {
		if o = local(); !unreached(m, o.b, o.err) {
			return o
		}
	}
	theirs, ok, _, down := s.onPeers(ctx, m, server)
	if ok {
		return theirs
	}
	if !ran {
		o = local()
	}
	if down != nil && unreached(m, o.b, o.err) {
		o.b, o.err = note(m, o.b, o.err, "the other member that runs it, at "+down.Error())
	}
	return o
}

// unreachable says which members could not be reached, and why.
type unreachable struct {
	addrs []string
	last  error
}

func (u *unreachable) Error() string {
	return fmt.Sprintf("%s, which cannot be reached now: %s", strings.Join(u.addrs, ", "), u.last)
}

// onPeers runs m on the live members that offer server, in the
// membership's order (rendezvous hashing), until one answers with
// anything but a failure that never reached the server (unreached): ok
// says one did. Otherwise failed is the first such failure a member
// answered (nil when none answered) and down names the members that could
// not be reached (nil when none).
func (s *Server) onPeers(ctx context.Context, m *requestMsg, server string) (o outcome, ok bool, failed *outcome, down *unreachable) {
	for _, mi := range s.member.running(server) {
		p := s.link(mi)
		ps, err := p.session(ctx, s)
		if err != nil {
			if down == nil {
				down = &unreachable{}
			}
			down.addrs, down.last = append(down.addrs, mi.Addr), err
			continue
		}
		o := outcome{}
		o.b, o.err = ps.request(ctx, m.Op, m.Name, m.Args)
		if o.err == nil && m.Op == opTool && m.Name == eventsTool {
			var res mcprt.Result
			if json.Unmarshal(o.b, &res) == nil && !res.IsError {
				if o.sub = subscribed(res); o.sub != "" {
					s.peerSubs.note(o.sub, p)
				}
			}
		}
		if !unreached(m, o.b, o.err) {
			return o, true, nil, nil
		}
		if failed == nil {
			failed = &o
		}
	}
	return outcome{}, false, failed, down
}

// forwardTo finds the first live member that offers server, a server
// this member does not configure, and can be reached (ops_subscribe.go's
// typed subscriptions); nil when no member offers it (the local runtime
// then says so). When the members offering it cannot be reached, or
// left, the error names them.
func (s *Server) forwardTo(ctx context.Context, server string) (*Session, error) {
	var down unreachable
	for _, m := range s.member.running(server) {
		ps, err := s.link(m).session(ctx, s)
		if err == nil {
			return ps, nil
		}
		down.addrs, down.last = append(down.addrs, m.Addr), err
	}
	if down.last != nil {
		return nil, messages.Errorf(messages.KindDisconnected, server, "server %q runs on the member at %s", server, &down)
	}
	return nil, s.leftErr(server)
}

// leftErr names the member that ran server and left the cluster (nil:
// none did).
func (s *Server) leftErr(server string) error {
	if gone := s.member.gone(server); len(gone) > 0 {
		return messages.Errorf(messages.KindDisconnected, server, "server %q runs on the member at %s, which cannot be reached now (it left the cluster) and no other member runs it", server, gone[0].Addr)
	}
	return nil
}
