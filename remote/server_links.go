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
// from the runtime's actors). When a session is silent for its timeout,
// a write blocked on its link is aborted there and then, and its actor
// writes everything after through protoactor's writer, which never
// blocks (TestStalledSessionCannotStallMember). Each attached session has
// a process address of its own, so a link serves one session.
type serverLinks struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	by      map[string]*link    // by session process address
	dialing map[string]*dialing // links being opened, by address
	closed  bool
}

// dialing is a link being opened; done is closed when l or err is set.
type dialing struct {
	done chan struct{}
	l    *link
	err  error
}

// sendTo writes a wire message to a session process's actor.
func (s *Server) sendTo(pid *actor.PID, m any) error {
	l, err := s.linkTo(pid.Address)
	if err != nil {
		return err
	}
	return l.send(pid, m)
}

// linkTo returns the link to a session process, opened on first use (one
// opening per address at a time, outside the lock: a process that cannot
// be reached delays only the writes to it).
func (s *Server) linkTo(addr string) (*link, error) {
	s.links.mu.Lock()
	if l := s.links.by[addr]; l != nil {
		s.links.mu.Unlock()
		return l, nil
	}
	if s.links.closed {
		s.links.mu.Unlock()
		return nil, errLinksClosed
	}
	if d := s.links.dialing[addr]; d != nil {
		s.links.mu.Unlock()
		<-d.done
		return d.l, d.err
	}
	d := &dialing{done: make(chan struct{})}
	if s.links.dialing == nil {
		s.links.dialing = map[string]*dialing{}
	}
	s.links.dialing[addr] = d
	s.links.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), attachTimeout)
	defer cancel()
	var l *link
	l, err := dialLink(ctx, s.n, addr, s.token, func(error) { s.linkLost(addr, l) })
	s.links.mu.Lock()
	delete(s.links.dialing, addr)
	closed := s.links.closed
	if err == nil && !closed && !l.ended.Load() { // ended already: linkLost found nothing to forget
		if s.links.by == nil {
			s.links.by = map[string]*link{}
		}
		s.links.by[addr] = l
	}
	s.links.mu.Unlock()
	if err == nil && closed {
		l.close(s.clock, 0)
		err = errLinksClosed
	}
	d.l, d.err = l, err
	close(d.done)
	return l, err
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
