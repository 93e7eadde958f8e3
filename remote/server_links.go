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
	// accept takes the links that connect (set once the member serves;
	// its gRPC server's credentials read it: link_accept.go).
	accept atomic.Pointer[func(net.Conn)]

	mu sync.Mutex
	// The fields below are guarded by mu.
	by     map[string]*link // by session process address
	closed bool
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
	s.links.mu.Lock()
	s.links.closed = true
	ls := s.links.by
	s.links.by = nil
	s.links.mu.Unlock()
	for _, l := range ls {
		l.close(s.clock, linkLinger)
	}
}
