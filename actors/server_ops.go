package actors

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
)

// opKind says what an operation is for.
type opKind int

const (
	opRequest opKind = iota // one request, answered with a Reply
	opList                  // every page of a list method, answered with a ListReply
	opHealth                // a keep-alive health check
)

// maxPages bounds a paginated listing: the catalog limit of pagination
// cursors.
const maxPages = catalog.MaxCursors

// op is one operation in flight on a connection generation.
type op struct {
	cmd    messages.Failable // the command it answers; nil for health checks
	id     messages.OpID
	gen    uint64
	token  messages.Token
	kind   opKind
	method string
	params json.RawMessage
	// deadline is when the operation times out (zero: never); see deadlines.
	deadline time.Time

	reply     func(messages.Reply)
	listReply func(messages.ListReply)
	field     string
	items     []json.RawMessage
	cursors   map[string]bool

	origin  messages.Origin
	resends int // times it went out again after its connection ended unsent

	// pinned: a protocol session's request, bound to its generation; it
	// never moves to another connection.
	pinned          bool
	stream          *messages.StreamSpec
	serverCancelled bool
}

// maxResends bounds how often one operation is moved to a new connection
// because the old one had ended before it could be written.
const maxResends = 3

// withConnection runs start on a live connection, connecting first (or
// queueing behind a dial in progress) as the lifecycle decides.
func (s *serverActor) withConnection(cmd messages.Failable, token messages.Token, origin messages.Origin, start func(gen uint64), fail func(*messages.Error)) {
	if s.closed {
		fail(messages.Errorf(messages.KindShutdown, s.cfg.Name, "the runtime is shutting down"))
		return
	}
	d, effects := s.life.Use(s.now(), origin)
	switch {
	case d.Err != nil:
		fail(d.Err)
	case d.Ready:
		start(d.Gen)
	default:
		s.waiters = append(s.waiters, &waiter{cmd: cmd, token: token, run: start, fail: fail})
	}
	s.exec(effects)
}

func (s *serverActor) request(m *messages.Request) {
	if m.Gen != 0 {
		s.pinnedRequest(m)
		return
	}
	s.withConnection(m, m.Token, m.Origin, func(gen uint64) {
		o := &op{cmd: m, gen: gen, token: m.Token, kind: opRequest, method: m.Method, params: m.Params, reply: m.Reply, origin: m.Origin}
		s.begin(o, s.deadline(m.Deadline))
	}, func(err *messages.Error) { m.Reply(messages.Reply{Err: err}) })
}

func (s *serverActor) listAll(m *messages.ListAll) {
	s.withConnection(m, m.Token, m.Origin, func(gen uint64) {
		o := &op{cmd: m, gen: gen, token: m.Token, kind: opList, method: m.Method, listReply: m.Reply, field: m.Field, cursors: map[string]bool{}, origin: m.Origin}
		s.begin(o, s.cfg.CatalogTimeout)
	}, func(err *messages.Error) { m.Reply(messages.ListReply{Err: err}) })
}

func (s *serverActor) connect(m *messages.Connect) {
	if s.closed {
		m.Reply(messages.ConnectReply{Err: messages.Errorf(messages.KindShutdown, s.cfg.Name, "the runtime is shutting down")})
		return
	}
	s.rec.revive()
	d, effects := s.life.Connect(s.now(), m.Fresh)
	switch {
	case d.Err != nil:
		m.Reply(messages.ConnectReply{Err: d.Err})
	case d.Ready:
		m.Reply(messages.ConnectReply{Info: s.info, Gen: d.Gen})
	default:
		s.waiters = append(s.waiters, &waiter{cmd: m, token: m.Token,
			run:  func(gen uint64) { m.Reply(messages.ConnectReply{Info: s.info, Gen: gen}) },
			fail: func(err *messages.Error) { m.Reply(messages.ConnectReply{Err: err}) }})
	}
	s.exec(effects)
}

func (s *serverActor) deadline(k messages.DeadlineKind) time.Duration {
	switch k {
	case messages.DeadlineCall:
		return s.cfg.CallTimeout
	case messages.DeadlineCatalog:
		return s.cfg.CatalogTimeout
	}
	return 0
}

// begin takes a lease on o's generation, arms its deadline and sends its
// first request.
func (s *serverActor) begin(o *op, deadline time.Duration) {
	s.exec(s.life.Acquire(o.gen))
	if o.token != 0 {
		s.byToken[o.token] = o
	}
	if deadline > 0 {
		o.deadline = s.now().Add(deadline)
		s.armDeadline(o.deadline)
	}
	s.send(o, nil)
}

// send issues o's next request (params, or a page cursor) under a fresh
// operation id.
func (s *serverActor) send(o *op, cursor *string) {
	o.id = s.rec.nextOp()
	s.ops[o.id] = o
	params := o.params
	if cursor != nil {
		params, _ = json.Marshal(map[string]string{"cursor": *cursor})
	}
	s.conns[o.gen].Send(messages.Op{ID: o.id, Method: o.method, Params: params, Stream: o.stream})
	// After Send: its outcome is a later message (the sink posts), and a
	// Send that panicked sent nothing to wait for.
	s.sent(o.id, o.gen)
}

func (s *serverActor) opDone(m messages.OpResult) {
	s.settle(m.ID)
	defer s.maybeStopped() // shutdown may have waited for this outcome
	if m.Err != nil && m.Err.Kind == messages.KindDisconnected && !m.OnlyThis {
		s.connLost(m.Gen, m.Err)
	}
	o := s.ops[m.ID]
	if o == nil || o.gen != m.Gen {
		return // finished already (timed out, aborted) or an older incarnation's
	}
	// A request that never left moves to a new connection, except a
	// catalog listing's own (o.cmd nil), which moves as a whole listing.
	if m.NotSent && o.kind != opHealth && o.cmd != nil && !o.pinned && o.resends < maxResends && !s.closed {
		s.resend(o)
		return
	}
	o.serverCancelled = m.ServerCancelled
	if m.Err != nil || o.kind != opList {
		s.finish(o, m.Result, m.Err)
		return
	}
	next, err := s.page(o, m.Result)
	if err != nil || next == nil {
		s.finish(o, nil, err)
		return
	}
	delete(s.ops, o.id)
	s.send(o, next)
}

// page adds one page's items to o and returns the next cursor, if any.
func (s *serverActor) page(o *op, result json.RawMessage) (*string, *messages.Error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(result, &fields); err != nil {
		return nil, messages.Errorf(messages.KindProtocol, s.cfg.Name, "%s result is not a JSON object", o.method)
	}
	var items []json.RawMessage
	if raw, ok := fields[o.field]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, messages.Errorf(messages.KindProtocol, s.cfg.Name, "%s result member %q is not an array", o.method, o.field)
		}
	}
	o.items = append(o.items, items...)
	var next string
	if raw, ok := fields["nextCursor"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &next); err != nil {
			return nil, messages.Errorf(messages.KindProtocol, s.cfg.Name, "%s nextCursor is not a string", o.method)
		}
	}
	if next == "" {
		return nil, nil
	}
	if o.cursors[next] {
		return nil, messages.Errorf(messages.KindProtocol, s.cfg.Name, "%s repeated a pagination cursor", o.method)
	}
	if len(o.cursors) >= maxPages {
		return nil, messages.Errorf(messages.KindProtocol, s.cfg.Name, "%s needs more than %d pagination cursors (the catalog limit)", o.method, maxPages)
	}
	o.cursors[next] = true
	return &next, nil
}

// finish ends o: its deadline stops, its lease returns, its caller hears.
func (s *serverActor) finish(o *op, result json.RawMessage, err *messages.Error) {
	delete(s.ops, o.id)
	if o.token != 0 && s.byToken[o.token] == o {
		delete(s.byToken, o.token)
	}
	switch o.kind {
	case opRequest:
		o.reply(messages.Reply{Result: result, Err: err, Gen: o.gen, ServerCancelled: o.serverCancelled && err == nil})
	case opList:
		if err != nil {
			o.listReply(messages.ListReply{Err: err, Gen: o.gen})
		} else {
			if o.method == "tools/list" {
				s.toolsListed(o.items)
			}
			o.listReply(messages.ListReply{Items: o.items, Gen: o.gen})
		}
	case opHealth:
		s.exec(s.life.HealthDone(s.now(), o.gen, err))
	}
	s.exec(s.life.Release(s.now(), o.gen))
}

// resend moves an operation whose connection had ended before it was
// written to a new connection: the server never saw it, so this is not a
// retry. Its lease on the dead generation returns; its deadline stays. A
// listing starts again from its first page.
func (s *serverActor) resend(o *op) {
	delete(s.ops, o.id)
	s.exec(s.life.Release(s.now(), o.gen))
	o.resends++
	o.items, o.cursors = nil, map[string]bool{}
	if o.token != 0 && s.byToken[o.token] == o {
		delete(s.byToken, o.token)
	}
	s.withConnection(o.cmd, o.token, o.origin, func(gen uint64) {
		o.gen = gen
		s.exec(s.life.Acquire(gen))
		if o.token != 0 {
			s.byToken[o.token] = o
		}
		if !o.deadline.IsZero() {
			s.armDeadline(o.deadline)
		}
		s.send(o, nil)
	}, func(err *messages.Error) {
		switch o.kind {
		case opRequest:
			o.reply(messages.Reply{Err: err})
		case opList:
			o.listReply(messages.ListReply{Err: err})
		}
	})
}

func (s *serverActor) opExpired(o *op) {
	if c := s.conns[o.gen]; c != nil {
		c.Cancel(o.id)
	}
	what := map[opKind]string{opRequest: "requestTimeoutMs", opList: "catalogTimeoutMs", opHealth: "health check"}[o.kind]
	s.finish(o, nil, messages.Errorf(messages.KindRequestTimeout, s.cfg.Name, "%s did not answer in time (%s)", o.method, what))
}

func (s *serverActor) startHealth(gen uint64) {
	o := &op{gen: gen, kind: opHealth, method: "tools/list"}
	s.begin(o, s.cfg.HealthTimeout)
}

func (s *serverActor) abort(token messages.Token) {
	for i, w := range s.waiters {
		if w.token == token {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			w.fail(messages.Errorf(messages.KindAborted, s.cfg.Name, "cancelled by the caller"))
			return
		}
	}
	if s.abortRefresh(token) {
		return
	}
	if o := s.byToken[token]; o != nil {
		if c := s.conns[o.gen]; c != nil {
			c.Cancel(o.id)
		}
		s.finish(o, nil, messages.Errorf(messages.KindAborted, s.cfg.Name, "cancelled by the caller"))
	}
}

func (s *serverActor) sortedOps() []*op {
	out := make([]*op, 0, len(s.ops))
	for _, o := range s.ops {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
