package remote

import (
	"fmt"
	"sync"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// The session's end of its protocol sessions' events (protoEventMsg):
// the receiver routes each by the id this session chose, at once and
// without waiting; each stream's handler runs on a goroutine of the
// stream's own, one notification at a time, in the order they came.

// protoTable is a session's protocol sessions and streams, by id.
type protoTable struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	next    uint64
	conns   map[uint64]*ProtocolSession
	streams map[uint64]*streamCore
	gone    *messages.Error // the session ended: nothing is added any more
}

func (t *protoTable) newID() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	return t.next
}

func (t *protoTable) goneErr() *messages.Error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone == nil {
		return messages.Errorf(messages.KindDisconnected, "", "the session has ended")
	}
	return t.gone
}

func (t *protoTable) addConn(ps *ProtocolSession) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone != nil {
		return false
	}
	if t.conns == nil {
		t.conns = map[uint64]*ProtocolSession{}
	}
	t.conns[ps.id] = ps
	return true
}

func (t *protoTable) dropConn(id uint64) {
	t.mu.Lock()
	delete(t.conns, id)
	t.mu.Unlock()
}

func (t *protoTable) addStream(c *streamCore) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone != nil {
		return false
	}
	if t.streams == nil {
		t.streams = map[uint64]*streamCore{}
	}
	t.streams[c.id] = c
	return true
}

// protoEvent routes one event of the member's (the receiver's turn: it
// never waits).
func (s *Session) protoEvent(m *protoEventMsg) {
	t := &s.protos
	t.mu.Lock()
	c, ps := t.streams[m.Stream], t.conns[m.Conn]
	t.mu.Unlock()
	switch m.Kind {
	case protoNote:
		if c != nil {
			c.note(m)
		}
	case protoSent:
		if c != nil {
			c.markSent()
		}
	case protoEnd:
		if c != nil && m.End != nil {
			c.ended(*m.End)
		}
	case protoDone:
		if ps != nil {
			// Its streams end by their own events, after the notifications
			// the member had for them.
			ps.end(m.Why, nil)
		}
	}
}

// endProtos ends every protocol session and stream of the session: it
// ended (err).
func (s *Session) endProtos(err *messages.Error) {
	t := &s.protos
	t.mu.Lock()
	if t.gone != nil {
		t.mu.Unlock()
		return
	}
	t.gone = err
	conns, streams := t.conns, t.streams
	t.conns, t.streams = nil, nil
	t.mu.Unlock()
	e := messages.End{Reason: messages.EndDisconnected, Error: err.Error()}
	if err.Kind == messages.KindShutdown {
		e.Reason = messages.EndCancelled
	}
	for _, ps := range conns {
		ps.end(err.Error(), &e)
	}
	for _, c := range streams {
		c.finish(e)
	}
}

// streamCore is a stream or observer on the session's side.
type streamCore struct {
	s        *Session
	ps       *ProtocolSession
	id       uint64
	handler  mcprt.Handler
	observer bool
	sent     chan struct{}
	sentOnce sync.Once
	done     chan struct{}
	wake     chan struct{} // buffered 1: the delivery goroutine has work

	mu sync.Mutex
	// The fields below are guarded by mu.
	queue   []*protoEventMsg // notifications for the handler
	last    *mcprt.End       // the member's end, after the queue
	final   *mcprt.End       // the end, once decided
	started bool             // the delivery goroutine runs
}

func newStreamCore(s *Session, ps *ProtocolSession, id uint64, h mcprt.Handler, observer bool) *streamCore {
	c := &streamCore{s: s, ps: ps, id: id, handler: h, observer: observer, sent: make(chan struct{}), done: make(chan struct{}), wake: make(chan struct{}, 1)}
	s.mu.Lock()
	if s.gone == nil {
		c.started = true
		s.asking.Add(1) // Close waits for the handler's last return
	}
	s.mu.Unlock()
	if c.started {
		go c.deliver()
	} else {
		c.final = &mcprt.End{Reason: messages.EndDisconnected, Error: "the session has ended", NotSent: true}
		close(c.done)
	}
	return c
}

func (c *streamCore) markSent() {
	if !c.observer {
		c.sentOnce.Do(func() { close(c.sent) })
	}
}

func (c *streamCore) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// note queues a notification; a handler that lets maxOutbox pile up
// ends its stream.
func (c *streamCore) note(m *protoEventMsg) {
	c.markSent() // a frame implies the request was written
	c.mu.Lock()
	if c.final != nil || c.last != nil {
		c.mu.Unlock()
		return
	}
	if len(c.queue) >= maxOutbox {
		c.mu.Unlock()
		c.fail(fmt.Errorf("the handler is not keeping up (%d notifications waiting)", maxOutbox))
		return
	}
	c.queue = append(c.queue, m)
	c.mu.Unlock()
	c.signal()
}

// ended is the member's end: it is the stream's once the handler has had
// every notification before it.
func (c *streamCore) ended(e mcprt.End) {
	c.mu.Lock()
	if c.last == nil {
		c.last = &e
	}
	c.mu.Unlock()
	c.signal()
}

// finish ends the stream now (the handler is not called again).
func (c *streamCore) finish(e mcprt.End) {
	c.mu.Lock()
	if c.final == nil {
		c.final = &e
	}
	c.mu.Unlock()
	c.signal()
}

// fail ends the stream with its handler's failure and cancels it on the
// member.
func (c *streamCore) fail(err error) {
	c.finish(mcprt.End{Reason: messages.EndError, Error: "protocol handler failed: " + err.Error()})
	c.s.fire(opProtoCancel, protoOpenArgs{Stream: c.id})
}

func (c *streamCore) cancel() {
	c.mu.Lock()
	already := c.final != nil
	c.mu.Unlock()
	if already {
		return
	}
	c.finish(mcprt.End{Reason: messages.EndCancelled})
	c.s.fire(opProtoCancel, protoOpenArgs{Stream: c.id})
}

// forget stops routing to the stream.
func (c *streamCore) forget() {
	t := &c.s.protos
	t.mu.Lock()
	if t.streams[c.id] == c {
		delete(t.streams, c.id)
	}
	t.mu.Unlock()
	c.ps.mu.Lock()
	delete(c.ps.streams, c.id)
	c.ps.mu.Unlock()
}

func (c *streamCore) closed() mcprt.End {
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return *c.final
}

// deliver runs the handler for each notification, in order, until the
// stream ends.
func (c *streamCore) deliver() {
	defer c.s.asking.Done()
	for {
		c.mu.Lock()
		if c.final == nil && len(c.queue) == 0 && c.last != nil {
			c.final = c.last
		}
		if c.final != nil {
			c.queue = nil
			c.mu.Unlock()
			c.forget()
			close(c.done)
			return
		}
		if len(c.queue) == 0 {
			c.mu.Unlock()
			<-c.wake
			continue
		}
		m := c.queue[0]
		c.queue = c.queue[1:]
		c.mu.Unlock()
		if err := c.call(m); err != nil {
			c.fail(err)
		}
	}
}

// call runs the handler once; a panic is its failure.
func (c *streamCore) call(m *protoEventMsg) (err error) {
	if c.handler == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return c.handler(m.Method, m.Params)
}
