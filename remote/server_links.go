package remote

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// The member's links to its sessions' processes (link.go): each session
// process opens one (link_accept.go), and the answers of its session
// actors (replies, questions, the end of a session) are written on it on
// the goroutine that made them. A write to a process that stopped reading
// can block once the connection's buffers are full; it blocks only that
// session's actor (deliveries reach session actors through the pool,
// never inline from the runtime's actors). When a session is silent for
// its timeout, a write blocked on its link is aborted there and then, and
// its actor writes everything after through protoactor's writer, which
// never blocks (TestStalledSessionCannotStallMember). Each attached
// session has a process address of its own, so a link serves one session.
type serverLinks struct {
	// accept takes the links that connect (set before the member
	// listens; its gRPC server's credentials read it: link_accept.go).
	accept atomic.Pointer[func(net.Conn)]
	// open is closed once the member serves sessions (its gateway runs):
	// a link that came earlier waits for it, or for stop (Close, or a
	// Serve that failed).
	open, stop chan struct{}
	shutOnce   sync.Once

	mu sync.Mutex
	// The fields below are guarded by mu.
	by     map[string]*link // by session process address
	closed bool
}

// start takes links from now on with accept.
func (ls *serverLinks) start(accept func(net.Conn)) {
	ls.open, ls.stop = make(chan struct{}), make(chan struct{})
	ls.accept.Store(&accept)
}

// opened lets the links in: the member serves sessions.
func (ls *serverLinks) opened() { close(ls.open) }

// shut refuses the links waiting for open, and later ones.
func (ls *serverLinks) shut() {
	ls.shutOnce.Do(func() {
		if ls.stop != nil {
			close(ls.stop)
		}
	})
}

// ready waits until the member serves sessions; false: it never will.
func (ls *serverLinks) ready() bool {
	select {
	case <-ls.open:
		return true
	case <-ls.stop:
		return false
	}
}

// errNoLink: the session process has no link (it ended).
var errNoLink = errors.New("remote: the session's process has no link to this member")

// sendTo writes a wire message to a session process's actor.
func (s *Server) sendTo(pid *actor.PID, m any) error {
	l, err := s.linkTo(pid.Address)
	if err != nil {
		return err
	}
	return l.send(pid, m)
}

// linkTo returns the link of a session process.
func (s *Server) linkTo(addr string) (*link, error) {
	s.links.mu.Lock()
	defer s.links.mu.Unlock()
	if l := s.links.by[addr]; l != nil {
		return l, nil
	}
	if s.links.closed {
		return nil, errLinksClosed
	}
	return nil, errNoLink
}

// linkLost forgets a link whose connection ended and ends the sessions
// of that process (it died, detached, or its link was aborted).
func (s *Server) linkLost(addr string, l *link) {
	s.links.mu.Lock()
	if s.links.by[addr] == l {
		delete(s.links.by, addr)
	}
	s.links.mu.Unlock()
	for _, pid := range s.router.sessionsAt(addr) {
		s.n.sys.Root.Send(pid, sessionEnd{why: "its connection ended"})
	}
}

// abortLink breaks the link to a session process when a write to it is
// in progress (a silent session whose actor may be blocked writing): the
// write returns, and the sessions of that process end.
func (s *Server) abortLink(addr string) {
	s.links.mu.Lock()
	l := s.links.by[addr]
	s.links.mu.Unlock()
	if l != nil && l.sending.Load() > 0 {
		l.conn.Close()
	}
}

// closeLinks ends every link after what was written (Close, once the
// sessions have ended).
func (s *Server) closeLinks() {
	s.links.shut()
	s.links.mu.Lock()
	s.links.closed = true
	ls := s.links.by
	s.links.by = nil
	s.links.mu.Unlock()
	for _, l := range ls {
		l.close(s.clock, linkLinger)
	}
}
