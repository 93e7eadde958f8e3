package actors

import (
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
)

// Refresh asks a server actor to make its catalog current: connect as the
// lifecycle allows (Origin decides failure memory), then list tools,
// resources and resource templates (when the server has resources),
// prompts (when it has prompts) and record them with its instructions, in
// memory and in the disk cache. Concurrent refreshes of one connection
// share one listing; a catalog already listed on the live connection and
// not changed since answers at once unless Force is set (Fresh also
// reconnects first). It is defined here rather than in messages because it
// concerns the catalog the actors own.
type Refresh struct {
	Token  messages.Token
	Origin messages.Origin
	// Fresh replaces a live connection with a new one first (an explicit
	// reconnect).
	Fresh bool
	// Force lists again even if the catalog is current.
	Force bool
	// Reply is called once with nil or why the listing failed; nil Reply
	// means nobody waits (a background fill).
	Reply func(*messages.Error)
}

// Fail answers the refresh with err.
func (r *Refresh) Fail(err *messages.Error) {
	if r.Reply != nil {
		r.Reply(err)
	}
}

// refreshRun is one catalog listing in progress on one connection.
type refreshRun struct {
	gen     uint64
	waiters []refreshWaiter
	entry   catalog.Entry
	notes   []string
	steps   []listStep
	// again is set when a list changed while this listing ran: another
	// listing follows it.
	again bool
	// moves counts how often the listing moved to a new connection because
	// its connection ended under it.
	moves int
	// resItems are the resources/list items, kept until the templates are
	// listed too (the resource rules judge them together).
	resItems []json.RawMessage
}

// refreshWaiter is a caller waiting for a refresh (token 0: internal).
type refreshWaiter struct {
	token messages.Token
	reply func(*messages.Error)
}

// listStep is one list method of a refresh.
type listStep struct {
	method, field string
}

func (s *serverActor) refreshCmd(m *Refresh) {
	reply := m.Reply
	if reply == nil {
		reply = func(*messages.Error) {}
	}
	if m.Fresh {
		s.connect(&messages.Connect{Token: m.Token, Fresh: true, Reply: func(c messages.ConnectReply) {
			if c.Err != nil {
				reply(c.Err)
				return
			}
			s.joinRefresh(c.Gen, true, m.Token, reply)
		}})
		return
	}
	s.withConnection(m, m.Token, m.Origin, func(gen uint64) { s.joinRefresh(gen, m.Force, m.Token, reply) }, reply)
}

// abortRefresh answers a caller waiting for a refresh with KindAborted (the
// listing itself goes on for the others); it reports whether token waited.
func (s *serverActor) abortRefresh(token messages.Token) bool {
	r := s.refresh
	if r == nil || token == 0 {
		return false
	}
	for i, w := range r.waiters {
		if w.token == token {
			r.waiters = append(r.waiters[:i], r.waiters[i+1:]...)
			w.reply(messages.Errorf(messages.KindAborted, s.cfg.Name, "cancelled by the caller"))
			return true
		}
	}
	return false
}

// joinRefresh answers reply when gen's catalog is current: at once if it
// is, else after the listing in progress or a new one.
func (s *serverActor) joinRefresh(gen uint64, force bool, token messages.Token, reply func(*messages.Error)) {
	if r := s.refresh; r != nil && r.gen == gen {
		r.waiters = append(r.waiters, refreshWaiter{token, reply})
		return
	}
	if !force && s.catGen == gen && !s.catStale {
		reply(nil)
		return
	}
	caps := struct {
		Resources json.RawMessage `json:"resources"`
		Prompts   json.RawMessage `json:"prompts"`
	}{}
	_ = json.Unmarshal(s.info.Capabilities, &caps)
	r := &refreshRun{gen: gen, waiters: []refreshWaiter{{token, reply}}, entry: catalog.Entry{Instructions: s.info.Instructions}}
	if old := s.refresh; old != nil {
		// A listing on an older connection is replaced by this one (the
		// connection was replaced, or the old listing's request moved to
		// this connection unsent): its callers wait for this listing now.
		// The old listing's results are ignored when they arrive.
		r.waiters = append(r.waiters, old.waiters...)
		old.waiters = nil
	}
	r.steps = append(r.steps, listStep{"tools/list", "tools"})
	if len(caps.Resources) > 0 && string(caps.Resources) != "null" {
		r.steps = append(r.steps, listStep{"resources/list", "resources"}, listStep{"resources/templates/list", "resourceTemplates"})
	}
	if len(caps.Prompts) > 0 && string(caps.Prompts) != "null" {
		r.steps = append(r.steps, listStep{"prompts/list", "prompts"})
	}
	s.refresh = r
	s.catStale = false
	s.nextStep(r, nil)
}

// nextStep runs the refresh's next listing, or completes it.
func (s *serverActor) nextStep(r *refreshRun, resources [][]json.RawMessage) {
	if s.refresh != r {
		return
	}
	if len(r.steps) == 0 {
		s.completeRefresh(r, nil)
		return
	}
	step := r.steps[0]
	r.steps = r.steps[1:]
	if !s.life.Connected(r.gen) {
		s.completeRefresh(r, messages.Errorf(messages.KindDisconnected, s.cfg.Name, "the connection ended while its catalog was listed"))
		return
	}
	o := &op{gen: r.gen, kind: opList, method: step.method, field: step.field, cursors: map[string]bool{}, origin: messages.OriginInternal}
	o.listReply = func(lr messages.ListReply) { s.stepDone(r, step, lr, resources) }
	s.begin(o, s.cfg.CatalogTimeout)
}

// stepDone records one listing of a refresh. A failed tools/list fails
// the refresh; a failed resources or prompts listing (a server that
// advertises the capability but does not implement the method) leaves that
// part empty with a note.
func (s *serverActor) stepDone(r *refreshRun, step listStep, lr messages.ListReply, resources [][]json.RawMessage) {
	if s.refresh != r {
		return
	}
	what := map[string]string{"tools/list": "tools", "resources/list": "resources", "resources/templates/list": "resources", "prompts/list": "prompts"}[step.method]
	if lr.Err != nil {
		if lr.Err.Kind == messages.KindDisconnected && r.moves < maxResends && !s.closed {
			s.moveRefresh(r)
			return
		}
		if step.method == "tools/list" || lr.Err.Kind != messages.KindRPC {
			if step.method == "tools/list" {
				s.listingFailed(r, lr.Err, false)
			}
			s.completeRefresh(r, lr.Err)
			return
		}
		r.notes = append(r.notes, step.method+" failed: "+catalog.CleanText(lr.Err.Message))
		if step.method == "resources/templates/list" && r.resItems != nil {
			// The resources stand on their own.
			if rs, _, _, err := catalog.AdmitResources(r.resItems, nil); err == nil {
				r.entry.Resources = rs
			}
		}
		s.nextStep(r, resources)
		return
	}
	switch step.method {
	case "tools/list":
		if err := catalog.CheckList(what, lr.Items); err != nil {
			e := messages.Errorf(messages.KindProtocol, s.cfg.Name, "%s", err)
			s.listingFailed(r, e, true)
			s.completeRefresh(r, e)
			return
		}
		tools, rejected, err := catalog.AdmitTools(lr.Items)
		if err != nil {
			e := messages.Errorf(messages.KindProtocol, s.cfg.Name, "tools catalog: %s", err)
			s.env.catalog.setFailed(s.cfg.Name, e)
			s.completeRefresh(r, e)
			return
		}
		r.entry.Tools, r.entry.Rejections = tools, rejected
	case "resources/list":
		r.resItems = lr.Items
		resources = append(resources, lr.Items)
	case "resources/templates/list":
		resources = append(resources, lr.Items)
		if err := catalog.CheckList(what, resources...); err != nil {
			r.notes = append(r.notes, err.Error())
		} else if rs, ts, dropped, err := catalog.AdmitResources(r.resItems, lr.Items); err != nil {
			r.notes = append(r.notes, "resources catalog failed: "+err.Error())
		} else {
			r.entry.Resources, r.entry.ResourceTemplates = rs, ts
			if dropped > 0 {
				r.notes = append(r.notes, fmt.Sprintf("%d resources with user information in their URI were left out", dropped))
			}
		}
	case "prompts/list":
		if err := catalog.CheckList(what, lr.Items); err != nil {
			r.notes = append(r.notes, err.Error())
		} else if prompts, err := catalog.AdmitPrompts(lr.Items); err != nil {
			r.notes = append(r.notes, "prompts catalog failed: "+err.Error())
		} else {
			r.entry.Prompts = prompts
		}
	}
	s.nextStep(r, resources)
}

// listingFailed records a tools/list that failed on a live connection
// (a catalog limit, the catalog deadline, a cursor loop, an error answer):
// the server shows as degraded with err while that connection lasts, and
// a call naming a tool the catalog does not hold gets err instead of
// tool_not_found. withdraw (the listing broke a catalog limit: its
// metadata is unusable) also withdraws the server's tools; otherwise the
// tools known from an earlier listing or the cache stay callable. A
// listing cut short by the connection's end or the runtime's shutdown
// records nothing: the next connection lists again.
func (s *serverActor) listingFailed(r *refreshRun, err *messages.Error, withdraw bool) {
	switch err.Kind {
	case messages.KindDisconnected, messages.KindShutdown, messages.KindAborted:
		return
	}
	if s.closed || !s.life.Connected(r.gen) {
		return
	}
	s.catErr, s.catErrGen = err, r.gen
	if withdraw {
		s.tools = 0
		s.env.catalog.setFailed(s.cfg.Name, err)
		return
	}
	s.env.catalog.setListError(s.cfg.Name, err)
}

// moveRefresh lists again on a new connection, for the same callers, when
// the connection ended under a listing (a listing's requests are never
// moved one by one: one listing per connection). The move happens in a
// message of its own, once the lifecycle has seen the connection end.
func (s *serverActor) moveRefresh(r *refreshRun) {
	s.refresh = nil
	caller := false
	for _, w := range r.waiters {
		caller = caller || w.token != 0
	}
	if !caller {
		// Only the runtime itself waited (the listing every connect
		// starts): the next connection lists on its own, so nothing dials
		// just for this.
		err := messages.Errorf(messages.KindDisconnected, s.cfg.Name, "the connection ended while its catalog was listed")
		for _, w := range r.waiters {
			w.reply(err)
		}
		return
	}
	s.moving = append(s.moving, r.waiters...)
	s.movingMoves = max(s.movingMoves, r.moves+1)
	r.waiters = nil
	s.env.send(s.me, relistRefresh{incarnation: s.inc})
}

// relistRefresh carries out a moveRefresh.
type relistRefresh struct{ incarnation uint64 }

func (s *serverActor) relist() {
	ws, moves := s.moving, s.movingMoves
	s.moving, s.movingMoves = nil, 0
	if len(ws) == 0 {
		return
	}
	fail := func(err *messages.Error) {
		for _, w := range ws {
			w.reply(err)
		}
	}
	if s.closed {
		fail(messages.Errorf(messages.KindShutdown, s.cfg.Name, "the runtime is shutting down"))
		return
	}
	s.withConnection(nil, 0, messages.OriginInternal, func(gen uint64) {
		s.joinRefresh(gen, true, 0, func(*messages.Error) {})
		next := s.refresh
		if next == nil || next.gen != gen {
			fail(messages.Errorf(messages.KindDisconnected, s.cfg.Name, "the connection ended while its catalog was listed"))
			return
		}
		next.waiters = append(next.waiters, ws...)
		next.moves = max(next.moves, moves)
	}, fail)
}

// completeRefresh publishes a finished listing and answers its waiters.
func (s *serverActor) completeRefresh(r *refreshRun, err *messages.Error) {
	s.refresh = nil
	if r.again && s.life.Connected(r.gen) && !s.closed {
		defer s.joinRefresh(r.gen, true, 0, func(*messages.Error) {})
	}
	if err == nil {
		now := s.now()
		s.catErr, s.catErrGen = nil, 0
		s.catGen = r.gen
		s.tools = len(r.entry.Tools)
		s.env.catalog.setLive(s.cfg.Name, r.entry, r.notes, now)
		if s.env.cache != nil && s.cfg.CacheKey != "" {
			s.env.cache.write(s.cfg.Name, s.cfg.CacheKey, r.entry, now)
		}
	}
	for _, w := range r.waiters {
		w.reply(err)
	}
}

// catalogChanged handles notifications/{tools,resources,prompts}/list_changed:
// the catalog is stale, and is listed again at once when its connection is
// up.
func (s *serverActor) catalogChanged(gen uint64) {
	s.catStale = true
	s.env.catalog.markStale(s.cfg.Name)
	if r := s.refresh; r != nil && r.gen == gen {
		r.again = true
		return
	}
	if s.life.Connected(gen) && !s.closed {
		s.joinRefresh(gen, true, 0, func(*messages.Error) {})
	}
}
