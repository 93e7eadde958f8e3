package remote

import (
	"encoding/json"

	mcprt "github.com/mcprt/mcprt"
)

// The session's end of its calls' caller tags and progress. A call made
// with a caller tag (mcprt.WithCaller) is remembered while in flight, so a
// question or progress report the member ties to it (askMsg.Call) reaches
// the session's hooks with that tag: CallerOf in the hook's context,
// Progress.Caller. Progress leaves the member through its pool, which
// may reorder two reports; a report that does not increase its call's
// progress (the protocol says each must) is a late one and is dropped.

// taggedCall is a call in flight of this session that carries a caller
// tag or has reported progress.
type taggedCall struct {
	caller   any
	progress float64
	reported bool
}

// tag remembers the caller tag of call id; s.mu is held.
func (s *Session) tag(id uint64, caller any) {
	if s.tagged == nil {
		s.tagged = map[uint64]*taggedCall{}
	}
	s.tagged[id] = &taggedCall{caller: caller}
}

// untag forgets call id once it is answered.
func (s *Session) untag(id uint64) {
	s.mu.Lock()
	delete(s.tagged, id)
	s.mu.Unlock()
}

// callerOf is the caller tag of call id (nil: none, or not in flight).
func (s *Session) callerOf(id uint64) any {
	if id == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tagged[id]; t != nil {
		return t.caller
	}
	return nil
}

// progress hands one progress report of a call in flight to the
// session's Progress hook.
func (s *Session) progress(m *askMsg) {
	f := s.client.Progress
	var q progressQ
	if f == nil || json.Unmarshal(m.Body, &q) != nil {
		return
	}
	s.mu.Lock()
	if _, live := s.pending[m.Call]; !live || s.gone != nil {
		s.mu.Unlock()
		return // the call was answered or given up on: its progress is late
	}
	t := s.tagged[m.Call]
	if t == nil {
		s.tag(m.Call, nil)
		t = s.tagged[m.Call]
	}
	if t.reported && q.Progress <= t.progress {
		s.mu.Unlock()
		return
	}
	t.progress, t.reported = q.Progress, true
	caller := t.caller
	s.mu.Unlock()
	s.hostMu.Lock()
	defer s.hostMu.Unlock()
	defer asHostPanic() // a panic of the hook's is this receiver's crash, as Deliver's (supervise.go)
	f(mcprt.Progress{Server: m.Server, Token: q.Token, Progress: q.Progress, Total: q.Total, Message: q.Message, Caller: caller})
}
