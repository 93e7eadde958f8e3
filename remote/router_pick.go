package remote

import (
	"encoding/json"

	"github.com/asynkron/protoactor-go/actor"
)

// Which session a server's question goes to. The protocol does not tie a
// server's request to the client request that caused it on stdio (nor on
// an HTTP server's standalone GET stream), so the member decides by the
// calls in flight, in this order:
//
//  1. the session with a call in flight naming that server (the oldest
//     such call, when several sessions have one);
//  2. else the session with a call in flight naming no server (an mcp
//     call resolved by tool name), the oldest first;
//  3. else the session whose call last named that server (the question
//     comes after the call, for example on the GET stream);
//  4. else the session attached first among those attached now.
//
// With one session calling a server at a time this is exactly the session
// whose call caused the question. A question the runtime ties to a call
// (sessionCall, asks.go) skips the rule and goes to that call's session.

// flight is a call of a session in flight: the server it names ("" for
// none) and its order among all calls.
type flight struct {
	server string
	seq    uint64
}

// begin records a session's call in flight.
func (r *router) begin(pid *actor.PID, id uint64, server string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	if r.flights[pid.Id] == nil {
		r.flights[pid.Id] = map[uint64]flight{}
	}
	r.flights[pid.Id][id] = flight{server: server, seq: r.seq}
	if server != "" {
		r.lastUse[server] = pid.Id
	}
}

// finish forgets a call (answered, cancelled, or its session ended).
func (r *router) finish(pid *actor.PID, id uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.flights[pid.Id], id)
}

// attached reports whether the session actor pid is attached now.
func (r *router) attached(pid *actor.PID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.sessions[pid.Id]
	return ok
}

// pick chooses the session a question of server goes to (nil: none is
// attached).
func (r *router) pick(server string) *actor.PID {
	r.mu.Lock()
	defer r.mu.Unlock()
	var named, unnamed string
	var namedSeq, unnamedSeq uint64
	for sid, calls := range r.flights {
		if _, ok := r.sessions[sid]; !ok {
			continue
		}
		for _, f := range calls {
			switch {
			case f.server == server && (named == "" || f.seq < namedSeq):
				named, namedSeq = sid, f.seq
			case f.server == "" && (unnamed == "" || f.seq < unnamedSeq):
				unnamed, unnamedSeq = sid, f.seq
			}
		}
	}
	for _, sid := range []string{named, unnamed, r.lastUse[server]} {
		if e, ok := r.sessions[sid]; ok && sid != "" {
			return e.pid
		}
	}
	if len(r.order) == 0 {
		return nil
	}
	return r.sessions[r.order[0]].pid
}

// requestServer is the server a request names ("" for none): the
// "server" of its arguments. Only requests that may reach a server count
// (the others read what the runtime knows and cause no question).
func requestServer(m *requestMsg) (server string, counts bool) {
	switch m.Op {
	case opTool, opCallTool, opConnect, opGetPrompt, opReadResource:
	default:
		return "", false
	}
	if server, ok := argsServer(m.Args); ok {
		return server, true
	}
	var a struct {
		Server string `json:"server"`
	}
	_ = json.Unmarshal(m.Args, &a)
	return a.Server, true
}
