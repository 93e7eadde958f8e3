package actors

import (
	"time"

	"github.com/mcprt/mcprt/messages"
)

// userWaits stands a server's call deadlines still while one of its
// requests waits for a person (an elicitation the host is asking): time a
// call spends waiting for a person's answer does not count toward its
// deadline. When the last wait ends, every deadline in flight moves later
// by the time waited and the timer is re-armed.
type userWaits struct {
	n     int       // requests waiting for a person now
	since time.Time // when n became positive
}

// paused reports whether deadlines stand still.
func (s *serverActor) paused() bool { return s.waits.n > 0 }

func (s *serverActor) userWait(m messages.UserWait) {
	w := &s.waits
	switch {
	case m.Delta > 0:
		if w.n == 0 {
			w.since = s.now()
		}
		w.n += m.Delta
	case m.Delta < 0 && w.n > 0:
		w.n += m.Delta
		if w.n > 0 {
			return
		}
		w.n = 0
		waited := s.now().Sub(w.since)
		next := time.Time{}
		for _, o := range s.ops {
			if o.deadline.IsZero() {
				continue
			}
			o.deadline = o.deadline.Add(waited)
			if next.IsZero() || o.deadline.Before(next) {
				next = o.deadline
			}
		}
		if !next.IsZero() {
			s.stopDeadlines()
			s.armDeadline(next)
		}
	}
}

// clientNote hands the host a notification meant for it (progress, a log
// message, the end of a URL-mode elicitation).
func (s *serverActor) clientNote(m messages.ConnNotification) {
	if s.env.clientNote != nil && m.Gen == s.life.Gen() {
		s.env.clientNote(messages.ClientNote{Server: s.cfg.Name, Method: m.Method, Params: m.Params})
	}
}
