package supervisor

import (
	"encoding/json"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// Listing gathers the items of one catalog refresh under the catalog's
// admission rules; the server actor supplies it (ServerConfig.NewListing),
// and hands it back with CatalogListed. Its methods must be pure.
type Listing interface {
	// Add takes the items of one list method that succeeded. An error
	// means the refresh cannot stand: limit says it broke a catalog limit
	// (the server's tools are withdrawn and the failure shows in its
	// status); otherwise its tools were refused as a whole.
	Add(method string, items []json.RawMessage) (limit bool, err error)
	// Skip notes an optional list method the server answered with an
	// error (it advertised the capability without implementing it).
	Skip(method, message string)
}

// catalogState is the single-flight catalog refresh and what it left.
type catalogState struct {
	run         *refreshRun     // the refresh in progress, if any
	moving      []refreshWaiter // callers of a refresh moving to a new connection
	movingMoves int
	gen         uint64          // the generation the catalog was last listed on
	stale       bool            // a list changed since
	err         *messages.Error // why the last tools listing failed on errGen (nil: it did not)
	errGen      uint64
}

// refreshRun is one catalog refresh in progress on one connection.
type refreshRun struct {
	gen     uint64
	waiters []refreshWaiter
	listing Listing
	steps   []listStep
	// again is set when a list changed while this refresh ran: another
	// refresh follows it.
	again bool
	// moves counts how often the refresh moved to a new connection because
	// its connection ended under it.
	moves int
}

// refreshWaiter is a caller waiting for a refresh (token 0 and to nil:
// the runtime itself).
type refreshWaiter struct {
	token messages.Token
	to    messages.Failable
}

// listStep is one list method of a refresh.
type listStep struct{ method, field string }

// Refresh makes the catalog current for cmd (answered with Answer, nil
// when current): connect as the lifecycle allows (fresh: replace the live
// connection first), then join the refresh of that connection or start
// one. A catalog listed on the live connection and not changed since
// answers at once unless force is set.
func (s *Server) Refresh(now time.Time, token messages.Token, origin messages.Origin, fresh, force bool, cmd messages.Failable) []Effect {
	s.input(now)
	if fresh {
		s.connect(waiter{kind: waitFresh, token: token, cmd: cmd}, true)
		return s.out
	}
	s.withConnection(waiter{kind: waitRefresh, token: token, cmd: cmd, match: cmd, force: force}, origin)
	return s.out
}

// answer tells one refresh waiter the outcome.
func (s *Server) answer(w refreshWaiter, err *messages.Error) {
	if w.to != nil {
		s.emit(Answer{To: w.to, Err: err})
	}
}

func (s *Server) answerAll(ws []refreshWaiter, err *messages.Error) {
	for _, w := range ws {
		s.answer(w, err)
	}
}

func (s *Server) listingEnded() *messages.Error {
	return messages.Errorf(messages.KindDisconnected, s.cfg.Name, "the connection ended while its catalog was listed")
}

// abortRefresh answers a caller waiting for a refresh with err (the
// refresh itself goes on for the others); it reports whether token waited.
func (s *Server) abortRefresh(token messages.Token, err *messages.Error) bool {
	r := s.cat.run
	if r == nil || token == 0 {
		return false
	}
	for i, w := range r.waiters {
		if w.token == token {
			r.waiters = append(r.waiters[:i], r.waiters[i+1:]...)
			s.answer(w, err)
			return true
		}
	}
	return false
}

// join answers to when gen's catalog is current: at once if it is, else
// after the refresh in progress or a new one.
func (s *Server) join(gen uint64, force bool, token messages.Token, to messages.Failable) {
	c := &s.cat
	if r := c.run; r != nil && r.gen == gen {
		r.waiters = append(r.waiters, refreshWaiter{token, to})
		return
	}
	if !force && c.gen == gen && !c.stale {
		s.answer(refreshWaiter{token, to}, nil)
		return
	}
	r := &refreshRun{gen: gen, waiters: []refreshWaiter{{token, to}}}
	if s.cfg.NewListing != nil {
		r.listing = s.cfg.NewListing()
	}
	if old := c.run; old != nil {
		// A refresh on an older connection is superseded by this one (the
		// connection was replaced, or the old refresh's request moved to
		// this connection unsent): its callers wait for this one now. The
		// old refresh's results are ignored when they arrive.
		r.waiters = append(r.waiters, old.waiters...)
		old.waiters = nil
	}
	r.steps = append(r.steps, listStep{"tools/list", "tools"})
	if s.caps.Resources {
		r.steps = append(r.steps, listStep{"resources/list", "resources"}, listStep{"resources/templates/list", "resourceTemplates"})
	}
	if s.caps.Prompts {
		r.steps = append(r.steps, listStep{"prompts/list", "prompts"})
	}
	c.run = r
	c.stale = false
	s.nextStep(r)
}

// nextStep starts the refresh's next listing, or completes it.
func (s *Server) nextStep(r *refreshRun) {
	if s.cat.run != r {
		return
	}
	if len(r.steps) == 0 {
		s.complete(r, nil)
		return
	}
	step := r.steps[0]
	r.steps = r.steps[1:]
	if !s.life.Connected(r.gen) {
		s.complete(r, s.listingEnded())
		return
	}
	s.begin(&op{gen: r.gen, kind: opList, method: step.method, field: step.field, cursors: map[string]bool{},
		origin: messages.OriginInternal, run: r}, s.cfg.CatalogTimeout)
}

// stepDone records one listing of a refresh. A failed tools/list fails
// the refresh; a failed resources or prompts listing answered with an
// error leaves that part empty with a note. A connection that ends under
// the refresh moves it, whole, to a new one.
func (s *Server) stepDone(r *refreshRun, method string, items []json.RawMessage, err *messages.Error) {
	if s.cat.run != r {
		return
	}
	if err != nil {
		if err.Kind == messages.KindDisconnected && r.moves < MaxResends && !s.closed {
			s.moveRefresh(r)
			return
		}
		if method == "tools/list" || err.Kind != messages.KindRPC {
			if method == "tools/list" {
				s.listingFailed(r, err, false)
			}
			s.complete(r, err)
			return
		}
		if r.listing != nil {
			r.listing.Skip(method, err.Message)
		}
		s.nextStep(r)
		return
	}
	if r.listing != nil {
		if limit, e := r.listing.Add(method, items); e != nil {
			me := messages.Errorf(messages.KindProtocol, s.cfg.Name, "%s", e)
			if limit {
				s.listingFailed(r, me, true)
			} else {
				s.emit(Withdraw{Err: me})
			}
			s.complete(r, me)
			return
		}
	}
	s.nextStep(r)
}

// listingFailed records a tools/list that failed on a live connection (a
// catalog limit, the catalog deadline, a cursor loop, an error answer):
// the server shows as degraded with err while that connection lasts, and
// a call naming a tool the catalog does not hold gets err instead of
// tool_not_found. withdraw (the listing broke a catalog limit: its
// metadata is unusable) also withdraws the server's tools; otherwise the
// tools known from an earlier listing or the cache stay callable. A
// listing cut short by the connection's end or the runtime's shutdown
// records nothing: the next connection lists again.
func (s *Server) listingFailed(r *refreshRun, err *messages.Error, withdraw bool) {
	switch err.Kind {
	case messages.KindDisconnected, messages.KindShutdown, messages.KindAborted:
		return
	}
	if s.closed || !s.life.Connected(r.gen) {
		return
	}
	s.cat.err, s.cat.errGen = err, r.gen
	if withdraw {
		s.emit(Withdraw{Err: err, Reset: true})
		return
	}
	s.emit(ListError{Err: err})
}

// moveRefresh lists again on a new connection, for the same callers, when
// the connection ended under a refresh (a refresh's requests are never
// moved one by one: one refresh per connection). The move happens in an
// input of its own (Relist), once the lifecycle has seen the connection
// end.
func (s *Server) moveRefresh(r *refreshRun) {
	s.cat.run = nil
	caller := false
	for _, w := range r.waiters {
		caller = caller || w.token != 0
	}
	if !caller {
		// Only the runtime itself waited (the refresh every connect
		// starts): the next connection lists on its own, so nothing dials
		// just for this.
		s.answerAll(r.waiters, s.listingEnded())
		return
	}
	s.cat.moving = append(s.cat.moving, r.waiters...)
	s.cat.movingMoves = max(s.cat.movingMoves, r.moves+1)
	r.waiters = nil
	s.emit(Relist{})
}

// Relist carries out the moves Relist effects asked for.
func (s *Server) Relist(now time.Time) []Effect {
	s.input(now)
	ws, moves := s.cat.moving, s.cat.movingMoves
	s.cat.moving, s.cat.movingMoves = nil, 0
	if len(ws) == 0 {
		return s.out
	}
	if s.closed {
		s.answerAll(ws, s.shutdownErr())
		return s.out
	}
	s.withConnection(waiter{kind: waitRelist, ws: ws, moves: moves}, messages.OriginInternal)
	return s.out
}

// complete publishes a finished refresh and answers its waiters.
func (s *Server) complete(r *refreshRun, err *messages.Error) {
	s.cat.run = nil
	again := r.again && s.life.Connected(r.gen) && !s.closed
	if err == nil {
		s.cat.err, s.cat.errGen = nil, 0
		s.cat.gen = r.gen
		s.emit(CatalogListed{Gen: r.gen, Listing: r.listing})
	}
	s.answerAll(r.waiters, err)
	if again {
		s.join(r.gen, true, 0, nil)
	}
}

// CatalogChanged reports a list_changed notification on generation gen:
// the catalog is stale, and is listed again at once when its connection
// is up.
func (s *Server) CatalogChanged(now time.Time, gen uint64) []Effect {
	s.input(now)
	if gen != s.life.Gen() {
		return s.out
	}
	s.cat.stale = true
	s.emit(CatalogStale{})
	if r := s.cat.run; r != nil && r.gen == gen {
		r.again = true
		return s.out
	}
	if s.life.Connected(gen) && !s.closed {
		s.join(gen, true, 0, nil)
	}
	return s.out
}

// CatalogError is why the last tools listing failed, while its connection
// lasts (nil: it did not).
func (s *Server) CatalogError() *messages.Error {
	if s.cat.err != nil && s.life.Connected(s.cat.errGen) {
		return s.cat.err
	}
	return nil
}

// ListingError is the last tools listing failure as recorded, whether or
// not its connection lasts (a change of it is worth publishing).
func (s *Server) ListingError() *messages.Error { return s.cat.err }
