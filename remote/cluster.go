package remote

import (
	"sync"

	"github.com/asynkron/protoactor-go/cluster"
)

// A serving member is a Proto.Actor cluster member (cluster.New and
// StartMember over the member's own remote: the same bind address, token
// check and TLS), with the membership provider of membership.go and
// protoactor's partitioned identity lookup (disthash; no grains are
// placed through it today). The servers it offers (offers.go) are
// cluster kinds; a session's request for a server this member does not
// run, or that failed here, goes to a live member that advertises it
// (peers.go), and to the next one when that one cannot be reached or
// cannot run it either.

// startMember starts this member's node as a cluster member.
//
// ready runs as soon as the member's remote listens, inside protoactor's
// StartMember, which then sleeps a second before it returns: what a
// session needs (the token file, the gateway) is ready before that
// second, so a session that attaches as soon as the port answers is
// served.
func (s *Server) startMember(t *nodeTLS, ready func(*node) error) (*node, error) {
	ctok, err := clusterToken(s.opts.ClusterTokenFile)
	if err != nil {
		return nil, err
	}
	var seeds []string
	for _, p := range s.opts.Peers {
		seeds = append(seeds, p.Addr)
	}
	timeout := s.opts.MemberTimeout
	if timeout <= 0 {
		timeout = DefaultMemberTimeout
	}
	s.member = newProvider(memberInfo{Servers: s.rt.Servers(), Token: s.token}, seeds, s.clock, timeout, s.logger)
	s.member.offer = s.offered
	s.member.changed = s.peerOffers // peers_catalog.go
	opened := make(chan struct{})
	s.member.ready = func(c *cluster.Cluster) error {
		if err := ready(&node{sys: c.ActorSystem, rem: c.Remote, addr: c.ActorSystem.Address(), tls: t, cl: c}); err != nil {
			return err
		}
		close(opened)
		return nil
	}
	auth := &memberAuth{token: ctok, connected: s.member.connected, ready: opened}
	creds := memberCreds{token: s.token, cluster: ctok, isMember: s.member.isMember}
	n, err := startNodeWith(s.opts.Listen, t, s.logger, serverOptions(s.token, t, auth, &s.links.accept), dialOptionsWith(creds, t), s.member)
	if err != nil {
		_ = s.member.Shutdown(false) // its views may have started
		s.member = nil
	}
	return n, err
}

// leaveCluster tells the other members this one leaves and stops the
// views (Close, before the node stops).
func (s *Server) leaveCluster() {
	if s.member != nil {
		_ = s.member.Shutdown(true)
	}
}

// peerLinks are this member's sessions on the other members, by address.
type peerLinks struct {
	mu sync.Mutex
	by map[string]*peerLink // guarded by mu
}

// link returns the link to the member m, made on first use; its token
// is the one m announced last.
func (s *Server) link(m memberInfo) *peerLink {
	s.peerLinks.mu.Lock()
	defer s.peerLinks.mu.Unlock()
	if s.peerLinks.by == nil {
		s.peerLinks.by = map[string]*peerLink{}
	}
	p := s.peerLinks.by[m.Addr]
	if p == nil {
		p = &peerLink{addr: m.Addr, tls: s.opts.PeerTLS}
		s.peerLinks.by[m.Addr] = p
	}
	p.mu.Lock()
	p.token, p.servers = m.Token, m.Servers
	p.mu.Unlock()
	return p
}

// livePeers are the links to the live members (the cluster's topology)
// but this one, by address.
func (s *Server) livePeers() []*peerLink {
	if s.member == nil {
		return nil
	}
	var out []*peerLink
	for _, m := range s.member.live() {
		out = append(out, s.link(m))
	}
	return out
}

// allLinks are every link made (Close closes them).
func (s *Server) allLinks() []*peerLink {
	s.peerLinks.mu.Lock()
	defer s.peerLinks.mu.Unlock()
	out := make([]*peerLink, 0, len(s.peerLinks.by))
	for _, p := range s.peerLinks.by {
		out = append(out, p)
	}
	return out
}
