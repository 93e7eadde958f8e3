package remote

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strings"
)

// What the forwarding (peers.go) and the credentials (cluster_auth.go)
// ask of the membership (membership.go).

// isMember reports whether addr is taken for a member's (it gets the
// cluster token).
func (p *provider) isMember(addr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addrs[addr]
}

// connected notes a member that connected with the cluster token.
func (p *provider) connected(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.addrs[addr] = true
}

// running returns the live members but this one that offer server in
// their last view, ordered by rendezvous hashing of the server's name
// (every member agrees on the order, and one member's leaving moves only
// its servers). The topology's kinds are not asked: protoactor keeps a
// member's kinds as they were when it joined (a topology changes only
// with its members' ids), and offers change while members live.
func (p *provider) running(server string) []memberInfo {
	topo := *p.topo.Load()
	p.mu.Lock()
	var out []memberInfo
	for _, m := range topo {
		if h, ok := p.heard[m.Address()]; ok && h.info.ID == m.Id && slices.Contains(h.info.Servers, server) {
			out = append(out, h.info)
		}
	}
	p.mu.Unlock()
	score := func(m memberInfo) uint64 {
		h := fnv.New64a()
		_, _ = h.Write([]byte(server + "\x00" + m.ID))
		return h.Sum64()
	}
	slices.SortFunc(out, func(a, b memberInfo) int { return cmp.Compare(score(b), score(a)) })
	return out
}

// live returns the live members but this one.
func (p *provider) live() []memberInfo {
	topo := *p.topo.Load()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []memberInfo
	for _, m := range topo {
		if h, ok := p.heard[m.Address()]; ok && h.info.ID == m.Id {
			out = append(out, h.info)
		}
	}
	slices.SortFunc(out, func(a, b memberInfo) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}

// gone returns the members that left and ran server ("" for any).
func (p *provider) gone(server string) []memberInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []memberInfo
	for _, m := range p.left {
		if server == "" || slices.Contains(m.Servers, server) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b memberInfo) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}

// alone reports that this member knows no other (live or left): nothing
// is forwarded.
func (p *provider) alone() bool {
	return len(*p.topo.Load()) == 0 && p.leftCount.Load() == 0
}
