package extension

import "slices"

// Session is the life of one protocol session: bound to one connection
// generation, it tracks its pending requests and its open streams and
// observers (by id), refuses new work once closed or once its connection
// has ended, and decides what ending it means for each piece of work.
type Session struct {
	closed, ended bool
	why           string
	requests      map[uint64]bool
	streams       map[uint64]bool
}

// SessionEffect is something a session's actor must do.
type SessionEffect interface{ sessionEffect() }

// AbortRequest gives up on a pending request (on the wire, the
// transport's way).
type AbortRequest struct{ ID uint64 }

// CancelStream ends a stream or observer as cancelled.
type CancelStream struct{ ID uint64 }

// LoseStream ends a stream or observer as disconnected.
type LoseStream struct {
	ID  uint64
	Why string
}

// SignalDone closes the session's Done signal.
type SignalDone struct{}

// Unbind tells the server the session is gone.
type Unbind struct{}

// StopSession stops the session's actor: nothing it owns is open any more.
type StopSession struct{}

func (AbortRequest) sessionEffect() {}
func (CancelStream) sessionEffect() {}
func (LoseStream) sessionEffect()   {}
func (SignalDone) sessionEffect()   {}
func (Unbind) sessionEffect()       {}
func (StopSession) sessionEffect()  {}

// Refusal says why the session takes no new work ("" when it does).
func (s *Session) Refusal() string {
	switch {
	case s.closed:
		return "the protocol session is closed"
	case s.ended:
		return "the protocol session's connection has ended (" + s.why + "); connect again"
	}
	return ""
}

// Closed reports whether Close was called; Ended whether the connection
// ended.
func (s *Session) Closed() bool { return s.closed }

// Ended reports whether the session's connection has ended.
func (s *Session) Ended() bool { return s.ended }

// Request records a pending request.
func (s *Session) Request(id uint64) {
	if s.requests == nil {
		s.requests = map[uint64]bool{}
	}
	s.requests[id] = true
}

// RequestDone forgets a finished request.
func (s *Session) RequestDone(id uint64) { delete(s.requests, id) }

// Stream records an open stream or observer.
func (s *Session) Stream(id uint64) {
	if s.streams == nil {
		s.streams = map[uint64]bool{}
	}
	s.streams[id] = true
}

// StreamDone forgets an ended stream or observer; once a closed or ended
// session owns none, its actor stops.
func (s *Session) StreamDone(id uint64) []SessionEffect {
	delete(s.streams, id)
	if (s.closed || s.ended) && len(s.streams) == 0 {
		return []SessionEffect{StopSession{}}
	}
	return nil
}

// Close ends the session at the companion's request: pending requests are
// aborted, streams and observers cancelled, Done signalled, and the server
// told. The shared connection stays open.
func (s *Session) Close() []SessionEffect {
	if s.closed {
		return nil
	}
	wasEnded := s.ended
	s.closed = true
	var out []SessionEffect
	for _, id := range sorted(s.requests) {
		out = append(out, AbortRequest{ID: id})
	}
	s.requests = nil
	for _, id := range sorted(s.streams) {
		out = append(out, CancelStream{ID: id})
	}
	if !wasEnded {
		out = append(out, SignalDone{}, Unbind{})
	}
	if len(s.streams) == 0 {
		out = append(out, StopSession{})
	}
	return out
}

// ConnEnded ends the session because its connection ended: streams and
// observers end disconnected and Done is signalled. Pending requests fail
// on their own (their connection is gone), and nothing moves to another
// connection.
func (s *Session) ConnEnded(why string) []SessionEffect {
	if s.ended || s.closed {
		return nil
	}
	s.ended, s.why = true, why
	var out []SessionEffect
	for _, id := range sorted(s.streams) {
		out = append(out, LoseStream{ID: id, Why: why})
	}
	out = append(out, SignalDone{})
	if len(s.streams) == 0 {
		out = append(out, StopSession{})
	}
	return out
}

func sorted(m map[uint64]bool) []uint64 {
	out := make([]uint64, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
