package remote

import (
	"context"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// The member's links to its sessions' processes (link.go): the answers
// of session actors (replies, questions, the end of a session) are
// written on the goroutine that made them, one stream per session
// process. A write to a process that stopped reading can block once the
// stream's flow-control window is full; it blocks only that session's
// actor (deliveries reach session actors through the pool, never inline
// from the runtime's actors), and a session silent for its timeout has
// its process's link aborted, which ends the write.
type serverLinks struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	by     map[string]*link // by session process address
	closed bool
}

// sendTo writes a wire message to a session process's actor.
func (s *Server) sendTo(pid *actor.PID, m any) error {
	l, err := s.linkTo(pid.Address)
	if err != nil {
		return err
	}
	return l.send(pid, m)
}

// linkTo returns the link to a session process, dialled on first use.
func (s *Server) linkTo(addr string) (*link, error) {
	s.links.mu.Lock()
	defer s.links.mu.Unlock()
	if l := s.links.by[addr]; l != nil {
		return l, nil
	}
	if s.links.closed {
		return nil, errLinksClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), attachTimeout)
	defer cancel()
	var l *link
	l, err := dialLink(ctx, s.n, addr, s.token, func(error) { s.linkLost(addr, l) })
	if err != nil {
		return nil, err
	}
	if s.links.by == nil {
		s.links.by = map[string]*link{}
	}
	s.links.by[addr] = l
	return l, nil
}

// linkLost forgets a link whose stream ended and ends the sessions of
// that process (it died, or its link was aborted).
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
