package simtests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// The host's side of the protocol-extension API: one registration of the
// simulated protocol "sim", its sessions, streams and observers.
// Blocking calls (Protocol.Connect, Session.Request, Session.Close,
// Protocol.Dispose) are host operations on their own goroutines; the rest
// (RegisterProtocol, OpenStream, WatchNotifications, Stream.Cancel,
// Observer.Close) run on the simulation goroutine between steps. A stream's
// handler runs in its actor's turn and traces every frame; ends and
// sessions' Done are noticed whenever the simulation waits (collectProto).

// simDefinition is the simulated protocol.
var simDefinition = mcprt.Definition{
	Namespace:     "sim",
	Requests:      []string{"sim/echo", "sim/missing"},
	Streams:       []string{"sim/items"},
	Notifications: []string{methodItem, methodOther, methodChanged},
}

// protoState is the host's protocol-extension state.
type protoState struct {
	proto    *mcprt.Protocol // nil before register and after dispose
	disposed bool            // Dispose was called
	sessions []*hostSession  // in the order they were opened
	byID     map[string]*hostSession
	streams  []*hostStream // streams and observers, in the order they were opened
	byStream map[string]*hostStream
}

// hostSession is one protocol session the host opened.
type hostSession struct {
	id, server string
	s          *mcprt.Session
	gen        uint64 // the connection it is bound to
	done       bool   // its Done was seen closed
	closing    bool   // the host closed it (or disposed the protocol)
	replaced   bool   // a fresh connect of its server started since it opened
}

// hostStream is one stream or observer the host opened.
type hostStream struct {
	id       string
	sess     *hostSession
	observer bool
	stream   *mcprt.Stream
	obs      *mcprt.Observer
	done     <-chan struct{}
	end      mcprt.End
	ended    bool
	gen      uint64 // where its request went (0: not yet, or an observer)

	routed    []int // seq of every frame the port handed to it, in order
	delivered int   // frames its handler received
	failAt    int   // the handler fails on this frame (1-based; 0: never)
	panicAt   int   // the handler panics on this frame

	// What may end it, as the host saw it happen (checked at its end).
	cancelled    bool // the host cancelled it, closed its session or disposed
	answered     bool // the server answered (result or notifications/cancelled)
	rpcErr       *messages.Error
	handlerError bool
	notSent      bool
	lateOpen     bool // opened on a session already Done or closing
	sent         bool // its Sent was closed when it ended
}

func (h *Host) proto() *protoState {
	if h.ps == nil {
		h.ps = &protoState{byID: map[string]*hostSession{}, byStream: map[string]*hostStream{}}
	}
	return h.ps
}

// Register registers the simulated protocol (synchronously).
func (h *Host) Register() error {
	ps := h.proto()
	h.w.Tracef("host register %s", simDefinition.Namespace)
	p, err := h.w.rt.RegisterProtocol(simDefinition)
	if err != nil {
		h.w.Tracef("host register = %s", errOutcome(err))
		return nil
	}
	ps.proto, ps.disposed = p, false
	h.w.Tracef("host register = ok")
	return nil
}

// Session opens a protocol session on server (Protocol.Connect).
func (h *Host) Session(id, server string) error {
	ps := h.proto()
	if ps.proto == nil {
		return fmt.Errorf("session %s: register the protocol first", id)
	}
	p := ps.proto
	return h.start(&hostOp{id: id, kind: "session", what: "session " + server, server: server}, func(ctx context.Context) outcome {
		s, err := p.Connect(ctx, server)
		if err != nil {
			return errOutcome(err)
		}
		return outcome{ok: true, text: "session on " + s.ServerInfo().Name, server: server, session: s}
	})
}

// session returns an open session by id.
func (h *Host) session(id string) (*hostSession, error) {
	if s := h.proto().byID[id]; s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("no session %q", id)
}

// Request sends a request on a session (Session.Request). The request's
// id is added to params as "req", so the server's echo names it.
func (h *Host) Request(id, session, method, params string) error {
	hs, err := h.session(session)
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(params), &m) != nil || m == nil {
		return fmt.Errorf("request %s: params must be a JSON object", id)
	}
	if _, ok := m["req"]; !ok {
		m["req"], _ = json.Marshal(id)
	}
	full, _ := json.Marshal(m)
	s := hs.s
	op := &hostOp{id: id, kind: "prequest", what: fmt.Sprintf("request %s %s %s", session, method, full), server: hs.server, session: session}
	return h.start(op, func(ctx context.Context) outcome {
		raw, err := s.Request(ctx, method, full)
		if err != nil {
			return errOutcome(err)
		}
		return outcome{ok: true, text: string(raw), server: hs.server}
	})
}

// OpenStream opens a stream sim/items on a session. The stream's id is
// added to params as "stream".
func (h *Host) OpenStream(id, session, params string, failAt, panicAt int) error {
	ps := h.proto()
	hs, err := h.session(session)
	if err != nil {
		return err
	}
	if ps.byStream[id] != nil {
		return fmt.Errorf("stream %q exists already", id)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(params), &m) != nil || m == nil {
		return fmt.Errorf("stream %s: params must be a JSON object", id)
	}
	m["stream"], _ = json.Marshal(id)
	full, _ := json.Marshal(m)
	x := &hostStream{id: id, sess: hs, failAt: failAt, panicAt: panicAt, lateOpen: hs.closing || hs.done}
	h.w.Tracef("host %s stream %s %s", id, session, full)
	st, err := hs.s.OpenStream("sim/items", full, h.handler(x))
	if err == nil {
		x.stream, x.done = st, st.Done()
	}
	return h.opened(x, err)
}

// opened records a stream or observer the host opened, or traces why it
// could not.
func (h *Host) opened(x *hostStream, err error) error {
	if err != nil {
		h.w.Tracef("host %s = %s", x.id, errOutcome(err))
		return nil
	}
	ps := h.proto()
	ps.streams = append(ps.streams, x)
	ps.byStream[x.id] = x
	return nil
}

// Watch opens an observer of methods on a session.
func (h *Host) Watch(id, session string, methods []string, failAt int) error {
	ps := h.proto()
	hs, err := h.session(session)
	if err != nil {
		return err
	}
	if ps.byStream[id] != nil {
		return fmt.Errorf("observer %q exists already", id)
	}
	x := &hostStream{id: id, sess: hs, observer: true, failAt: failAt, lateOpen: hs.closing || hs.done}
	h.w.Tracef("host %s watch %s %s", id, session, strings.Join(methods, ","))
	o, err := hs.s.WatchNotifications(methods, h.handler(x))
	if err == nil {
		x.obs, x.done = o, o.Done()
	}
	return h.opened(x, err)
}

// handler is a stream's or observer's handler: it traces each frame,
// checks it, and fails where the host was told to.
func (h *Host) handler(x *hostStream) mcprt.Handler {
	return func(method string, params json.RawMessage) error {
		var p struct {
			Stream string `json:"stream"`
			Seq    int    `json:"seq"`
			N      int    `json:"n"`
		}
		_ = json.Unmarshal(params, &p)
		x.delivered++
		n := x.delivered
		what := fmt.Sprintf("n=%d", p.N)
		if p.Stream != "" {
			what = fmt.Sprintf("%s seq=%d", p.Stream, p.Seq)
		}
		h.w.Tracef("host %s < %s %s", x.id, method, what)
		h.w.inv.handled(x, p.Seq)
		switch {
		case n == x.panicAt:
			h.w.Tracef("host %s handler panics", x.id)
			x.handlerError = true
			panic("simulated handler panic")
		case n == x.failAt:
			h.w.Tracef("host %s handler fails", x.id)
			x.handlerError = true
			return errors.New("simulated handler failure")
		}
		return nil
	}
}

// CancelStream cancels a stream or closes an observer.
func (h *Host) CancelStream(id string) error {
	x := h.proto().byStream[id]
	if x == nil {
		return fmt.Errorf("no stream or observer %q", id)
	}
	h.w.Tracef("host %s cancel", id)
	x.cancelled = true
	if x.observer {
		x.obs.Close()
	} else {
		x.stream.Cancel()
	}
	return nil
}

// CloseSession closes a session (Session.Close, blocking).
func (h *Host) CloseSession(id, session string) error {
	hs, err := h.session(session)
	if err != nil {
		return err
	}
	h.closingSession(hs)
	s := hs.s
	return h.start(&hostOp{id: id, kind: "sclose", what: "close-session " + session, server: hs.server}, func(context.Context) outcome {
		s.Close()
		return outcome{ok: true, text: "closed"}
	})
}

// closingSession marks a session and its streams as ended by the host.
func (h *Host) closingSession(hs *hostSession) {
	hs.closing = true
	for _, x := range h.proto().streams {
		if x.sess == hs {
			x.cancelled = true
		}
	}
}

// Dispose disposes the registration (Protocol.Dispose, blocking).
func (h *Host) Dispose(id string) error {
	ps := h.proto()
	if ps.proto == nil {
		return fmt.Errorf("dispose: nothing registered")
	}
	p := ps.proto
	ps.proto, ps.disposed = nil, true
	for _, hs := range ps.sessions {
		h.closingSession(hs)
	}
	return h.start(&hostOp{id: id, kind: "dispose", what: "dispose"}, func(context.Context) outcome {
		p.Dispose()
		return outcome{ok: true, text: "disposed"}
	})
}

// sessionOpened records a session a host operation opened.
func (h *Host) sessionOpened(op *hostOp) {
	ps := h.proto()
	var caps struct {
		Experimental struct {
			Sim struct {
				Gen uint64 `json:"gen"`
			} `json:"sim"`
		} `json:"experimental"`
	}
	_ = json.Unmarshal(op.res.session.ServerInfo().Capabilities, &caps)
	hs := &hostSession{id: op.id, server: op.server, s: op.res.session, gen: caps.Experimental.Sim.Gen}
	if ps.disposed && ps.proto == nil {
		hs.closing = true // opened by a Connect racing Dispose
	}
	ps.sessions = append(ps.sessions, hs)
	ps.byID[op.id] = hs
}

// collectProto traces what ended since the last time: sessions whose Done
// closed, then streams and observers that ended, in the order they were
// opened, checking each end.
func (h *Host) collectProto() {
	ps := h.ps
	if ps == nil {
		return
	}
	for _, hs := range ps.sessions {
		if hs.done {
			continue
		}
		select {
		case <-hs.s.Done():
			hs.done = true
			h.w.Tracef("host %s done: %s", hs.id, hs.s.Why())
		default:
		}
	}
	for _, x := range ps.streams {
		if x.ended {
			continue
		}
		select {
		case <-x.done:
		default:
			continue
		}
		x.ended = true
		if x.observer {
			x.end = x.obs.Closed()
		} else {
			x.end = x.stream.Closed()
		}
		if !x.observer {
			select {
			case <-x.stream.Sent():
				x.sent = true
			default:
			}
		}
		never := ""
		if !x.observer && !x.sent {
			never = " (never sent)"
		}
		h.w.Tracef("host %s ended %s%s", x.id, describeEnd(x.end), never)
		h.w.inv.streamEnded(x)
	}
}

// describeEnd renders a stream's end for the trace.
func describeEnd(e mcprt.End) string {
	out := string(e.Reason)
	if e.Error != "" {
		out += " " + strconv.Quote(e.Error)
	}
	if p := e.ProtocolError; p != nil {
		out += fmt.Sprintf(" code=%d", p.Code)
		if len(p.Data) > 0 {
			out += " data=" + string(p.Data)
		}
	}
	return out
}
