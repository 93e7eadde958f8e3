package transports

import (
	"bytes"
	"io"
	"net/url"
	"sync"
)

// sseTap reads an SSE body (a Streamable HTTP response stream or the legacy
// transport's GET stream) event by event, between the network and the HTTP clients
// (streamable.go, legacysse.go):
//   - it bounds each event to limit bytes, failing the read with
//     ErrFrameTooLarge as soon as one grows past it, without buffering more;
//   - it offers every notification to the connection's stream router and
//     removes those the router claims, so an extension stream's frames are
//     decoded once, from the raw bytes, and never reach the client's
//     notification path;
//   - it records a clean end of the body in the request's statusSlot, which
//     tells "the server ended this response without a result" from "the
//     connection broke".
//
// It holds at most one event plus one network read.
type sseTap struct {
	rc    io.ReadCloser
	limit int
	owner *limitedTransport
	slot  *statusSlot // nil for the legacy GET stream
	base  *url.URL    // the legacy GET stream's URL: endpoint events are checked against it

	mu   sync.Mutex // Read and Close may race when a context ends
	in   []byte     // read, not yet split into events
	scan int        // in[:scan] holds no event end (resume point)
	out  []byte     // ready for the caller
	err  error      // sticky end of reading
	buf  []byte
	// charge holds len(in)+len(out) in the Dialer's response budget.
	charge charge
}

func (s *sseTap) Read(p []byte) (n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if pe := recovered("SSE reader", recover()); pe != nil {
			s.err = pe
			n, err = 0, pe
		}
	}()
	for len(s.out) == 0 && s.err == nil {
		if s.buf == nil {
			s.buf = make([]byte, 32<<10)
		}
		// Never read past the limit plus one byte of an event.
		buf := s.buf[:min(len(s.buf), s.limit+1-len(s.in))]
		n, err := s.rc.Read(buf)
		s.in = append(s.in, buf[:n]...)
		if !s.charge.set(int64(len(s.in) + len(s.out))) {
			if s.slot != nil {
				s.slot.overBudget.Store(true)
			}
			s.err = errBudget
			break
		}
		s.split()
		if s.err != nil {
			break
		}
		if len(s.in) > s.limit {
			s.tooLarge()
			break
		}
		if err != nil {
			if err == io.EOF && s.slot != nil {
				s.slot.eof.Store(true)
			}
			s.out = append(s.out, s.in...) // an unfinished last event: the client decides
			s.in = nil
			s.err = err
		}
	}
	if len(s.out) > 0 {
		n := copy(p, s.out)
		s.out = s.out[n:]
		if len(s.out) == 0 {
			s.out = nil // let a large event's buffer go
		}
		s.charge.set(int64(len(s.in) + len(s.out)))
		return n, nil
	}
	return 0, s.err
}

func (s *sseTap) Close() error {
	s.mu.Lock()
	s.charge.set(0)
	s.mu.Unlock()
	return s.rc.Close()
}

// foreign reports (and counts) a response event this stream must not
// hand to the client: on a POST's stream one for another request, on the
// legacy GET stream one for a request never sent.
func (s *sseTap) foreign(ev []byte) bool {
	var drop bool
	switch {
	case s.slot != nil && s.slot.conn != nil:
		drop = s.slot.conn.foreignResponse(ev, s.slot.reqID)
	case s.slot == nil && s.owner.foreign != nil:
		drop = s.owner.foreign(ev, "")
	}
	if drop {
		switch {
		case s.slot != nil && s.slot.conn != nil:
			s.slot.conn.unknownResponse()
		case s.owner.unknown != nil:
			s.owner.unknown()
		}
	}
	return drop
}

// tooLarge fails the stream: an event is over the limit.
func (s *sseTap) tooLarge() {
	s.owner.violation.Store(true)
	if s.slot != nil {
		s.slot.tooLarge.Store(true)
	}
	s.err = ErrFrameTooLarge
}

// split moves every complete event from in to out, except those the router
// claims.
func (s *sseTap) split() {
	for {
		end := eventEnd(s.in, s.scan)
		if end < 0 {
			// Resume just before the end next time: a blank line may
			// straddle two reads.
			s.scan = max(0, len(s.in)-2)
			return
		}
		s.scan = 0
		if end > s.limit {
			s.tooLarge()
			return
		}
		ev := s.in[:end]
		if err := checkEndpoint(ev, s.base); err != nil {
			s.err = err
			if s.owner.fail != nil {
				s.owner.fail(err)
			}
			return
		}
		switch {
		case s.foreign(ev):
			// A response this stream must not carry: dropped, counted.
		case s.claimed(ev):
		case len(s.out) == 0:
			s.out = ev[:len(ev):len(ev)] // no copy: in moves past it below
		default:
			s.out = append(s.out, ev...)
		}
		s.in = s.in[end:]
		if len(s.in) == 0 {
			s.in = nil // let a large event's buffer go
		}
	}
}

// eventEnd returns the length of the first complete event in b (up to and
// including the blank line that ends it), or -1; b[:from] is known to hold
// no event end.
func eventEnd(b []byte, from int) int {
	for i := from; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j
		// b[i] ends a line; an empty next line ends the event.
		k := i + 1
		if k < len(b) && b[k] == '\r' {
			k++
		}
		if k < len(b) && b[k] == '\n' {
			return k + 1
		}
	}
	return -1
}

var (
	dataField       = []byte("data:")
	cancelledMethod = []byte("notifications/cancelled")
)

// claimed reports whether the event is a notification the router took, or
// a server-to-client request handed to serverRequest.
func (s *sseTap) claimed(ev []byte) bool {
	claim, rt := s.owner.claim, s.owner.router
	note := bytes.Contains(ev, subscriptionKey) || bytes.Contains(ev, cancelledMethod)
	response := !note && rt != nil && bytes.Contains(ev, []byte(rt.prefix))
	request := s.owner.serverRequest != nil && bytes.Contains(ev, methodKey) && bytes.Contains(ev, idKey)
	if (claim == nil || (!note && !response)) && !request {
		return false
	}
	data := eventData(ev)
	f, err := decodeFrame(data)
	if err != nil {
		return false
	}
	hasID := len(f.ID) > 0 && string(f.ID) != "null"
	if f.Method != "" && hasID {
		if s.owner.serverRequest == nil {
			return false
		}
		var caller any
		if s.slot != nil {
			caller = s.slot.caller
		}
		s.owner.serverRequest(f.ID, f.Method, f.Params, caller)
		return true
	}
	if f.Method == "" && rt != nil && hasID {
		rt.responded(f.ID) // a response: the client still reads it
		return false
	}
	if f.Method == "" || hasID || claim == nil {
		return false
	}
	return claim(f.Method, f.Params)
}

var (
	methodKey = []byte(`"method"`)
	idKey     = []byte(`"id"`)
)

// eventData joins an event's data lines.
func eventData(ev []byte) []byte {
	var data []byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if v, ok := bytes.CutPrefix(line, dataField); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
	}
	return data
}
