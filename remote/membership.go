package remote

import (
	"encoding/json"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/mcprt/mcprt/clock"
)

// The membership: a Proto.Actor cluster provider (cluster.ClusterProvider)
// that needs no outside service and speaks only over the members' own
// authenticated remote (the bind address, the cluster token, TLS when
// served). Every member has a membership actor (membersName); every
// interval it sends its view (itself, its servers, the members it heard
// from) to every member it knows: the seeds (ServeOptions.Peers), the
// members it heard from, and the members others told it of. A member
// enters this member's membership when it is heard from directly (the
// membership actor is reachable only with the cluster token), and leaves
// it when it has not been heard from for the member timeout, or at once
// when it says it leaves. Each change goes to the cluster as its topology
// (MemberList.UpdateClusterTopology); protoactor then blocks a member that
// left by its id, so a member that was dropped (partitioned away longer
// than the timeout) is not let back in until it restarts (a new id).
//
// A member advertises each server it offers (offers.go: the servers of
// its configuration that did not fail here) as a cluster kind
// (serverKind), so the topology's Member.Kinds says who runs what; the
// forwarding (peers.go) picks among the live members advertising a server.

// membersName is the membership actor's name on every member.
const membersName = "mcprt-members"

// clusterName is the cluster's name (one cluster per set of members that
// share a cluster token).
const clusterName = "mcprt"

// serverKindPrefix marks the cluster kinds that are server names.
const serverKindPrefix = "mcp-server:"

func serverKind(name string) string { return serverKindPrefix + name }

// DefaultMemberTimeout is how long a member may go unheard before the
// others drop it from the membership (and route its servers elsewhere).
// Views go out every sixth of it (every 500 ms, or a sixth of a shorter
// timeout).
const DefaultMemberTimeout = 3 * time.Second

// memberInfo is what a member says of itself.
type memberInfo struct {
	ID   string `json:"id"`
	Addr string `json:"addr"`
	// Servers are the servers the member offers (offers.go).
	Servers []string `json:"servers"`
	// Token is the member's own token, for the members that attach to it
	// as a session to forward (it crosses only cluster-token streams;
	// never logged).
	Token string `json:"token"`
}

// viewMsg is a member's view, sent to every member it knows.
type viewMsg struct {
	From memberInfo `json:"from"`
	// Known are the addresses of the members the sender heard from.
	Known []string `json:"known,omitempty"`
	// Leaving says the sender is closing.
	Leaving bool `json:"leaving,omitempty"`
}

// heardFrom is a member heard from, and when.
type heardFrom struct {
	info memberInfo
	at   time.Time
}

// provider is the membership of one member.
type provider struct {
	self memberInfo // ID and Addr are set by StartMember
	// ready, when set, runs at the end of StartMember: the remote listens,
	// and protoactor's StartMember has yet to sleep its second.
	ready func(*cluster.Cluster) error
	// offer, when set, returns the servers this member offers now, at
	// every tick (retry: it knows other members, so it may try a server
	// it withdrew); nil keeps self.Servers as given.
	offer func(retry bool) []string
	// changed, when set, runs after every tick and every view taken in,
	// with no lock held: the membership may have changed.
	changed func()
	seeds   []string
	clock   clock.Clock
	every   time.Duration
	timeout time.Duration
	logger  *slog.Logger
	c       *cluster.Cluster

	// ticking is held through a tick, sends included: Shutdown waits on it
	// so no tick outlives it.
	ticking sync.Mutex

	mu sync.Mutex
	// The fields below are guarded by mu.
	heard   map[string]heardFrom  // by address
	learned map[string]time.Time  // addresses others named, not heard from yet: since when
	left    map[string]memberInfo // members that left, by address (until one is heard there again)
	dropped map[string]bool       // the ids of the members that left: never taken back
	addrs   map[string]bool       // every address taken for a member's (memberCreds)
	timer   clock.Timer
	stopped bool

	// topo is the cluster's topology: its live members but this one.
	topo atomic.Pointer[[]*cluster.Member]
	// leftCount is len(left), read without mu.
	leftCount atomic.Int32
}

var _ cluster.ClusterProvider = (*provider)(nil)

func newProvider(self memberInfo, seeds []string, clk clock.Clock, timeout time.Duration, logger *slog.Logger) *provider {
	every := min(timeout/6, DefaultMemberTimeout/6)
	p := &provider{self: self, clock: clk, every: every, timeout: timeout, logger: logger,
		heard: map[string]heardFrom{}, learned: map[string]time.Time{}, left: map[string]memberInfo{}, dropped: map[string]bool{}, addrs: map[string]bool{}}
	for _, s := range seeds {
		p.seeds = append(p.seeds, s)
		p.addrs[s] = true
	}
	p.topo.Store(&[]*cluster.Member{})
	return p
}

// StartMember spawns the membership actor and starts sending views.
func (p *provider) StartMember(c *cluster.Cluster) error {
	p.c = c
	p.mu.Lock()
	p.self.ID, p.self.Addr = c.ActorSystem.ID, c.ActorSystem.Address()
	p.mu.Unlock()
	c.ActorSystem.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*cluster.ClusterTopology); ok {
			others := slices.DeleteFunc(slices.Clone(t.Members), func(m *cluster.Member) bool { return m.Id == c.ActorSystem.ID })
			p.topo.Store(&others)
		}
	})
	if _, err := c.ActorSystem.Root.SpawnNamed(inlineProps(func() actor.Actor { return membersActor{p} }), membersName); err != nil {
		return err
	}
	p.tick()
	if p.ready != nil {
		return p.ready(c)
	}
	return nil
}

// StartClient: a member is never a cluster client.
func (p *provider) StartClient(*cluster.Cluster) error { return nil }

// Shutdown stops the views; graceful tells the known members this one
// leaves.
func (p *provider) Shutdown(graceful bool) error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil
	}
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
	}
	targets := p.targetsLocked()
	view := p.viewLocked()
	p.mu.Unlock()
	p.ticking.Lock() // a tick in flight ends first
	p.ticking.Unlock()
	if graceful && p.c != nil {
		view.Leaving = true
		p.send(targets, view)
	}
	return nil
}

// tick drops the members not heard from in time, updates the topology
// and sends this member's view, every interval.
func (p *provider) tick() {
	p.ticking.Lock()
	defer p.ticking.Unlock()
	var servers []string
	if p.offer != nil {
		servers = p.offer(!p.alone())
	}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	if p.offer != nil {
		p.self.Servers = servers
	}
	now := p.clock.Now()
	for addr, h := range p.heard {
		if now.Sub(h.at) > p.timeout {
			p.dropLocked(addr, h.info)
			p.logger.Info("cluster member left: not heard from in time", "member", addr, "timeout", p.timeout)
		}
	}
	for addr, at := range p.learned {
		if now.Sub(at) > p.timeout {
			delete(p.learned, addr)
		}
	}
	p.updateLocked()
	// A member heard from but not in the topology is one protoactor
	// blocked (its gossip says it left gracefully, or its heartbeat
	// expired): it left too.
	live := map[string]bool{}
	for _, m := range *p.topo.Load() {
		live[m.Id] = true
	}
	for addr, h := range p.heard {
		if !live[h.info.ID] {
			p.dropLocked(addr, h.info)
			p.logger.Info("cluster member left: blocked by the cluster", "member", addr)
		}
	}
	targets, view := p.targetsLocked(), p.viewLocked()
	p.timer = p.clock.AfterFunc(p.every, p.tick)
	p.mu.Unlock()
	p.send(targets, view)
	p.tellChanged()
}

// heardView takes in another member's view.
func (p *provider) heardView(v *viewMsg) {
	if reply := p.take(v); reply != nil {
		// The newcomer learns of this member at once, not a tick later.
		p.send([]string{v.From.Addr}, reply)
	}
	p.tellChanged()
}

// tellChanged runs the changed hook, unless the views stopped.
func (p *provider) tellChanged() {
	p.mu.Lock()
	stopped := p.stopped
	p.mu.Unlock()
	if p.changed != nil && !stopped {
		p.changed()
	}
}

// take takes in a view; it returns this member's view when the sender
// is new.
func (p *provider) take(v *viewMsg) *viewMsg {
	p.mu.Lock()
	defer p.mu.Unlock()
	from := v.From
	if p.stopped || from.Addr == "" || from.Addr == p.self.Addr {
		return nil
	}
	if p.dropped[from.ID] {
		// It left, or was dropped: protoactor does not let it back (a view
		// it sent before leaving may arrive after it said so).
		return nil
	}
	old, known := p.heard[from.Addr]
	if v.Leaving {
		if known && old.info.ID == from.ID {
			p.dropLocked(from.Addr, old.info)
			p.logger.Info("cluster member left", "member", from.Addr)
			p.updateLocked()
		}
		return nil
	}
	p.heard[from.Addr] = heardFrom{info: from, at: p.clock.Now()}
	p.addrs[from.Addr] = true
	delete(p.learned, from.Addr)
	delete(p.left, from.Addr)
	p.leftCount.Store(int32(len(p.left)))
	for _, a := range v.Known {
		_, heard := p.heard[a]
		if _, learned := p.learned[a]; !heard && !learned && a != p.self.Addr {
			p.learned[a] = p.clock.Now()
			p.addrs[a] = true
		}
	}
	if !known || old.info.ID != from.ID || !slices.Equal(old.info.Servers, from.Servers) {
		if known && old.info.ID == from.ID {
			p.logger.Info("cluster member's servers changed", "member", from.Addr, "servers", from.Servers)
		} else {
			p.logger.Info("cluster member joined", "member", from.Addr, "servers", from.Servers)
		}
		p.updateLocked()
		return p.viewLocked()
	}
	return nil
}

// dropLocked moves a member from the membership to the members that
// left.
func (p *provider) dropLocked(addr string, m memberInfo) {
	delete(p.heard, addr)
	p.left[addr] = m
	p.dropped[m.ID] = true
	p.leftCount.Store(int32(len(p.left)))
}

// updateLocked gives the cluster the membership: this member and every
// member heard from in time. Under mu, so updates apply in order.
func (p *provider) updateLocked() {
	if p.c == nil {
		return
	}
	members := cluster.Members{memberOf(p.self)}
	for _, h := range p.heard {
		members = append(members, memberOf(h.info))
	}
	p.c.MemberList.UpdateClusterTopology(members)
}

func memberOf(m memberInfo) *cluster.Member {
	host, portText, _ := net.SplitHostPort(m.Addr)
	port, _ := strconv.Atoi(portText)
	kinds := make([]string, len(m.Servers))
	for i, s := range m.Servers {
		kinds[i] = serverKind(s)
	}
	return &cluster.Member{Id: m.ID, Host: host, Port: int32(port), Kinds: kinds}
}

// targetsLocked are the addresses views go to.
func (p *provider) targetsLocked() []string {
	var out []string
	add := func(a string) {
		if a != p.self.Addr && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	for _, a := range p.seeds {
		add(a)
	}
	for a := range p.heard {
		add(a)
	}
	for a := range p.learned {
		add(a)
	}
	return out
}

func (p *provider) viewLocked() *viewMsg {
	v := &viewMsg{From: p.self}
	for a := range p.heard {
		v.Known = append(v.Known, a)
	}
	slices.Sort(v.Known)
	return v
}

// send posts a view to the membership actors at addrs.
func (p *provider) send(addrs []string, v *viewMsg) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	for _, a := range addrs {
		p.c.ActorSystem.Root.Send(actor.NewPID(a, membersName), wrapperspb.String(string(b)))
	}
}

// membersActor is the membership actor: it takes in the views of the
// other members (only members reach it: cluster_auth.go).
type membersActor struct{ p *provider }

func (a membersActor) Receive(ctx actor.Context) {
	s, ok := ctx.Message().(*wrapperspb.StringValue)
	if !ok {
		return
	}
	var v viewMsg
	if err := json.Unmarshal([]byte(s.GetValue()), &v); err != nil {
		a.p.logger.Warn("remote: refused a membership view", "err", err)
		return
	}
	a.p.heardView(&v)
}
