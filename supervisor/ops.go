package supervisor

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// opKind says what an operation is for.
type opKind int

const (
	opRequest opKind = iota // one request, answered with Reply
	opList                  // every page of a list method, answered with ListReply
	opHealth                // a keep-alive health check
)

// MaxResends bounds how often one operation (or one refresh) is moved to a
// new connection because the old one had ended before it could be written.
const MaxResends = 3

// op is one operation in flight on a connection generation, holding a
// lease on it. Each request it sends gets a fresh operation id.
type op struct {
	id     messages.OpID
	gen    uint64
	token  messages.Token
	kind   opKind
	method string
	params json.RawMessage
	// deadline is when the operation times out (zero: never); see deadlines.
	deadline time.Time

	req  *messages.Request // opRequest's command
	list *messages.ListAll // opList's command; nil for a refresh's own listing
	run  *refreshRun       // the refresh a listing of its own belongs to

	field   string
	items   []json.RawMessage
	cursors map[string]bool

	origin  messages.Origin
	resends int // times it went out again after its connection ended unsent

	// pinned: a protocol session's request, bound to its generation; it
	// never moves to another connection.
	pinned          bool
	stream          *messages.StreamSpec
	serverCancelled bool
}

// cmd is the command o answers (nil for health checks and a refresh's own
// listings).
func (o *op) cmd() messages.Failable {
	switch {
	case o.req != nil:
		return o.req
	case o.list != nil:
		return o.list
	}
	return nil
}

func (s *Server) deadline(k messages.DeadlineKind) time.Duration {
	switch k {
	case messages.DeadlineCall:
		return s.cfg.CallTimeout
	case messages.DeadlineCatalog:
		return s.cfg.CatalogTimeout
	}
	return 0
}

// begin takes a lease on o's generation, notes its deadline and sends its
// first request.
func (s *Server) begin(o *op, deadline time.Duration) {
	s.run(s.life.Acquire(o.gen))
	if o.token != 0 {
		s.byToken[o.token] = o
	}
	if deadline > 0 {
		o.deadline = s.now.Add(deadline)
		s.armDeadline(o.deadline)
	}
	s.send(o, nil)
}

// send issues o's next request (params, or a page cursor) under a fresh
// operation id.
func (s *Server) send(o *op, cursor *string) {
	s.lastOp++
	o.id = s.lastOp
	s.ops[o.id] = o
	params := o.params
	if cursor != nil {
		params, _ = json.Marshal(map[string]string{"cursor": *cursor})
	}
	op := messages.Op{ID: o.id, Method: o.method, Params: params, Stream: o.stream}
	if o.req != nil {
		op.Assist = o.req.Assist // the waiting caller may run the exchange
		op.Caller = o.req.Caller
	}
	s.emit(Send{Gen: o.gen, Op: op})
}

// OpResult reports the outcome of one request.
func (s *Server) OpResult(now time.Time, m messages.OpResult) []Effect {
	s.input(now)
	delete(s.owed.sends, m.ID)
	s.opResult(m)
	s.maybeStopped() // a shutdown may have waited for this outcome
	return s.out
}

func (s *Server) opResult(m messages.OpResult) {
	if m.Err != nil && m.Err.Kind == messages.KindDisconnected && !m.OnlyThis {
		s.connLost(m.Gen, m.Err)
	}
	o := s.ops[m.ID]
	if o == nil || o.gen != m.Gen {
		return // finished already (timed out, aborted) or an older incarnation's
	}
	// A request that never left moves to a new connection, except a
	// refresh's own listing, which moves as a whole refresh.
	if m.NotSent && s.movable(o) {
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
func (s *Server) page(o *op, result json.RawMessage) (*string, *messages.Error) {
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
	if len(o.cursors) >= s.cfg.MaxPages {
		return nil, messages.Errorf(messages.KindProtocol, s.cfg.Name, "%s needs more than %d pagination cursors (the catalog limit)", o.method, s.cfg.MaxPages)
	}
	o.cursors[next] = true
	return &next, nil
}

// finish ends o: its lease returns, its caller hears. Its deadline timer
// is left alone (at worst it fires once for nothing).
func (s *Server) finish(o *op, result json.RawMessage, err *messages.Error) {
	delete(s.ops, o.id)
	if o.token != 0 && s.byToken[o.token] == o {
		delete(s.byToken, o.token)
	}
	switch o.kind {
	case opRequest:
		s.emit(Reply{To: o.req, Reply: messages.Reply{Result: result, Err: err, Gen: o.gen, ServerCancelled: o.serverCancelled && err == nil}})
	case opList:
		if err == nil && o.method == "tools/list" {
			s.emit(ToolsListed{Items: o.items})
		}
		switch {
		case o.list == nil:
			s.stepDone(o.run, o.method, o.items, err)
		case err != nil:
			s.emit(ListReply{To: o.list, Reply: messages.ListReply{Err: err, Gen: o.gen}})
		default:
			s.emit(ListReply{To: o.list, Reply: messages.ListReply{Items: o.items, Gen: o.gen}})
		}
	case opHealth:
		s.run(s.life.HealthDone(s.now, o.gen, err))
	}
	s.run(s.life.Release(s.now, o.gen))
}

// resend moves an operation whose connection had ended before it was
// written to a new connection: the server never saw it, so this is not a
// retry. Its lease on the dead generation returns; its deadline stays. A
// listing starts again from its first page.
func (s *Server) resend(o *op) {
	delete(s.ops, o.id)
	s.run(s.life.Release(s.now, o.gen))
	o.resends++
	o.items, o.cursors = nil, map[string]bool{}
	if o.token != 0 && s.byToken[o.token] == o {
		delete(s.byToken, o.token)
	}
	s.withConnection(waiter{kind: waitResend, token: o.token, cmd: o.cmd(), match: o.cmd(), op: o}, o.origin)
}

// expire ends o at its deadline: cancelled the transport's way, its caller
// told it timed out.
func (s *Server) expire(o *op) {
	s.emit(Cancel{Gen: o.gen, ID: o.id})
	what := map[opKind]string{opRequest: "requestTimeoutMs", opList: "catalogTimeoutMs", opHealth: "health check"}[o.kind]
	s.finish(o, nil, messages.Errorf(messages.KindRequestTimeout, s.cfg.Name, "%s did not answer in time (%s)", o.method, what))
}

// sortedOps returns the operations in flight in id order (a simulation
// replays them the same way).
func (s *Server) sortedOps() []*op {
	out := make([]*op, 0, len(s.ops))
	for _, o := range s.ops {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
