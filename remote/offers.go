package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// The member's offers: the servers it advertises to the other members in
// its view. A server is offered until it fails here, and offered again
// once it connects here again (supervisor.Offer, one per server, taken
// from the server's status at every view the member sends). A server it
// withdrew is tried again by the member itself on a schedule of its own
// (supervisor.Retry; ServeOptions.ServerRetry) while it knows other
// members; a request of its own sessions tries it too when no other member
// offers it (peers.go).

// offers holds the member's offer of each of its servers and its own
// retries in flight.
type offers struct {
	retry  supervisor.Retry
	ctx    context.Context // the retries' (cancelled by stop)
	cancel context.CancelFunc
	wg     sync.WaitGroup // the retries in flight

	mu sync.Mutex
	// The fields below are guarded by mu.
	by       map[string]supervisor.Offer
	retrying map[string]bool
	stopped  bool
}

func newOffers(r supervisor.Retry) *offers {
	ctx, cancel := context.WithCancel(ctxBackground)
	return &offers{retry: r, ctx: ctx, cancel: cancel, by: map[string]supervisor.Offer{}, retrying: map[string]bool{}}
}

// offered reports whether the member offers server now.
func (o *offers) offered(server string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.by[server].Offered()
}

// withdraw withdraws server, configured here, after a request of its
// failed here without reaching it (the status may not say so: a failed
// explicit connect leaves a lazy server idle).
func (s *Server) withdraw(m *requestMsg, b json.RawMessage, err error) {
	if !unreached(m, b, err) {
		return
	}
	server := routedServer(m)
	if server == "" || !slices.Contains(s.rt.Servers(), server) {
		return
	}
	o := s.offers
	o.mu.Lock()
	defer o.mu.Unlock()
	if was := o.by[server]; !was.Withdrawn {
		o.by[server] = was.Withdraw(s.clock.Now(), o.retry)
		s.logger.Info("cluster: offering a server changed", "server", server, "offered", false, "err", messages.AsError(err, messages.KindInternal, server))
	}
}

// offered takes the runtime's server statuses and returns the servers
// this member offers, in configuration order; it starts the retries that
// are due when the member knows other members (retry).
func (s *Server) offered(retry bool) []string {
	o := s.offers
	statuses := s.rt.ServerStatuses()
	now := s.clock.Now()
	var names, due []string
	o.mu.Lock()
	for _, st := range statuses {
		next, try := o.by[st.Name].Next(st, now, o.retry)
		if next.Withdrawn != o.by[st.Name].Withdrawn {
			s.logger.Info("cluster: offering a server changed", "server", st.Name, "offered", next.Offered(), "state", st.State.String())
		}
		if try && (!retry || o.retrying[st.Name] || o.stopped) {
			// Not now: the retry's time is kept, a later one comes.
			next.Tries, next.RetryAt = o.by[st.Name].Tries, o.by[st.Name].RetryAt
			try = false
		}
		o.by[st.Name] = next
		if next.Offered() {
			names = append(names, st.Name)
		}
		if try {
			o.retrying[st.Name] = true
			due = append(due, st.Name)
		}
	}
	o.wg.Add(len(due))
	o.mu.Unlock()
	for _, name := range due {
		go func() {
			defer o.wg.Done()
			_, err := s.rt.Connect(o.ctx, name, false)
			s.logger.Info("cluster: tried a withdrawn server again", "server", name, "ok", err == nil)
			o.mu.Lock()
			delete(o.retrying, name)
			o.mu.Unlock()
		}()
	}
	return names
}

// stop ends the retries in flight and waits for them; no retry starts
// after it.
func (o *offers) stop() {
	o.mu.Lock()
	o.stopped = true
	o.mu.Unlock()
	o.cancel()
	o.wg.Wait()
}

// unreached reports whether m's outcome (b, err) is a failure that never
// reached its server (supervisor.Unreached): the request may then run on
// another member without running twice.
func unreached(m *requestMsg, b json.RawMessage, err error) bool {
	if err != nil {
		return supervisor.Unreached(messages.KindOf(err))
	}
	if !rendersResult(m) || !isErrorResult(b) {
		return false
	}
	var res mcprt.Result
	if json.Unmarshal(b, &res) != nil || !res.IsError {
		return false
	}
	code := res.ErrorCode()
	return code != "" && supervisor.Unreached((&wireErr{Code: code}).toError().Kind)
}

// rendersResult reports whether m is answered with a rendered
// mcprt.Result, a failure included (the mcp tool, RenderResource).
func rendersResult(m *requestMsg) bool { return m.Op == opTool || m.Op == opRenderResource }

// isErrorResult is a first look at a tool result's JSON that never
// decodes a success (every call's result passes here): appendResult ends
// an error result with "isError":true, and one json.Marshal wrote is
// looked through only when small (error results are).
func isErrorResult(b []byte) bool {
	return bytes.HasSuffix(b, []byte(`"isError":true}`)) || len(b) <= 16<<10 && bytes.Contains(b, []byte(`"isError":true`))
}

// note adds text to a failure's message: an error's, or an mcp tool
// result's (its text and details.message).
func note(m *requestMsg, b json.RawMessage, err error, text string) (json.RawMessage, error) {
	if err != nil {
		e := *messages.AsError(err, messages.KindInternal, "")
		e.Message += "; " + text
		return b, &e
	}
	var res mcprt.Result
	if !rendersResult(m) || json.Unmarshal(b, &res) != nil || !res.IsError {
		return b, nil
	}
	res.Text += "; " + text
	if msg, ok := res.Details["message"].(string); ok {
		res.Details["message"] = msg + "; " + text
	}
	if nb, err := json.Marshal(res); err == nil {
		return nb, nil
	}
	return b, nil
}
