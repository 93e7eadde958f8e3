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

// attached reports whether the session actor pid is attached now (it has
// not ended).
func (r *router) attached(pid *actor.PID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.pids[pid.Id] // forgotten when the session ends
	return ok
}

// pick chooses the session a question of server goes to (nil: none is
// attached), by the rule above (sessions.Member.Pick).
func (r *router) pick(server string) *actor.PID {
	r.mu.Lock()
	defer r.mu.Unlock()
	sid := r.core.Pick(server)
	if sid == "" {
		return nil
	}
	return r.pids[sid].pid
}

// requestServer is the server a request names ("" for none): the
// "server" of its arguments. Only requests that may reach a server count
// (the others read what the runtime knows and cause no question).
func requestServer(m *requestMsg) (server string, counts bool) {
	switch m.Op {
	case opTool, opCallTool, opConnect, opGetPrompt, opReadResource, opGetPromptWords, opRenderResource:
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
