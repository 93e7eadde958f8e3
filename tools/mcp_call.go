package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/internal/jsonscan"
	"github.com/mcprt/mcprt/messages"
)

func (m *MCP) call(ctx context.Context, name string, rawArgs json.RawMessage) Result {
	args, aerr := decodeToolArgs(rawArgs)
	if aerr != nil {
		return failure(aerr)
	}
	notes := m.syncPeers(ctx, true)
	e, err := m.resolve(ctx, name)
	if err != nil {
		return withNotes(failure(err), notes)
	}
	if e.Member == "" && m.elsewhere(ctx, e.Server) {
		// This runtime's own server, which the member withdrew: the call
		// goes where a call naming the server goes (peers.go).
		return m.peerCall(ctx, e, args)
	}
	return m.invoke(ctx, e, args)
}

// PeerRoute is a Peers that says when a call of one of this runtime's own
// servers goes to another member instead.
type PeerRoute interface {
	// Elsewhere reports whether a call of server, which this runtime
	// configures, goes to another member, as a call naming the server
	// would (the member withdrew it: it failed here).
	Elsewhere(ctx context.Context, server string) bool
}

// elsewhere asks the peers whether a call of this runtime's server goes
// to another member.
func (m *MCP) elsewhere(ctx context.Context, server string) bool {
	h := m.peers.Load()
	if h == nil {
		return false
	}
	r, ok := h.p.(PeerRoute)
	return ok && r.Elsewhere(ctx, server)
}

// callOn calls a tool of the named server: {"server": "s", "tool": "t"}
// means that server's t even when other servers have a tool named t too.
// The tool may be named bare or as the runtime spells it for that server
// ("s_t"); a tool of another server is refused, never called.
func (m *MCP) callOn(ctx context.Context, server, tool string, rawArgs json.RawMessage) Result {
	if err := m.configured(server); err != nil {
		return failure(err)
	}
	args, aerr := decodeToolArgs(rawArgs)
	if aerr != nil {
		return failure(aerr)
	}
	e, err := m.resolve(ctx, server+"_"+tool)
	if err != nil && err.Kind == messages.KindToolNotFound {
		e, err = m.resolve(ctx, tool)
		if err != nil && err.Kind == messages.KindAmbiguousTool {
			err = messages.Errorf(messages.KindToolNotFound, server, "server %q offers no tool named %s", server, quote(tool))
		}
	}
	if err != nil {
		return failure(err)
	}
	if e.Server != server {
		return failure(messages.Errorf(messages.KindToolNotFound, server, "server %q offers no tool named %s (server %q does)", server, quote(tool), e.Server))
	}
	return m.invoke(ctx, e, args)
}

// invoke runs one exposed tool: tools/call for a server's tool (with the
// output schema as the catalog had it when the call began), resources/read
// for a resource tool. It never retries.
func (m *MCP) invoke(ctx context.Context, e *entry, args json.RawMessage) Result {
	if m.sys == nil {
		return failure(errCacheView)
	}
	if e.Member != "" {
		return m.peerCall(ctx, e, args)
	}
	if e.Resource != nil {
		params, _ := json.Marshal(map[string]string{"uri": e.Resource.URI})
		r := m.sys.Request(ctx, e.Server, "resources/read", params, messages.DeadlineCall, messages.OriginModel)
		if r.Err != nil {
			return failure(r.Err)
		}
		return m.renderResource(e.Server, e.Name, r.Result)
	}
	params := make([]byte, 0, len(args)+len(e.Name)+32)
	params = append(params, `{"name":`...)
	params = jsonscan.AppendMarshalString(params, e.Name)
	params = append(params, `,"arguments":`...)
	params = append(params, args...)
	if m.opts.ProgressTokens {
		// The host shows progress (ClientHooks.Progress): the server may
		// report it against this token.
		seq := m.progressSeq.Add(1)
		params = append(params, `,"_meta":{"progressToken":"mcprt-progress-`...)
		params = strconv.AppendUint(params, seq, 10)
		params = append(params, `"}`...)
		if caller := messages.CallerOf(ctx); caller != nil {
			token := "mcprt-progress-" + strconv.FormatUint(seq, 10)
			m.progressCallers.Store(token, caller)
			defer m.progressCallers.Delete(token)
		}
	}
	params = append(params, '}')
	var asked uint64
	if m.opts.UserAsked != nil {
		asked = m.opts.UserAsked(e.Server)
	}
	res := m.callTool(ctx, e, params)
	if m.opts.UserAsked != nil && m.opts.UserAsked(e.Server) != asked {
		// The call waited for the user (the server asked them something):
		// the model reads it, and its deadline did not count that time.
		res.Text += "\n[The server asked the user during this call; the host answered for them (the user, or a policy such as decline).]"
		if res.Details == nil {
			res.Details = map[string]any{}
		}
		res.Details["askedUser"] = true
	}
	return res
}

// callTool sends tools/call and renders its outcome.
func (m *MCP) callTool(ctx context.Context, e *entry, params []byte) Result {
	r := m.sys.Request(ctx, e.Server, "tools/call", params, messages.DeadlineCall, messages.OriginModel)
	if r.Err != nil {
		if res, ok := m.urlElicitationRequired(ctx, e, r.Err); ok {
			return res
		}
		if r.Err.Kind == messages.KindRPC {
			c := *r.Err
			c.Kind = messages.KindToolError
			res := failure(&c)
			res.Text += expectedParameters(e)
			return res
		}
		return failure(r.Err)
	}
	return m.renderCall(e, r.Result)
}

// refreshMany makes several servers' catalogs current at once (connecting
// them as their lifecycles allow) and returns the failures by server.
func (m *MCP) refreshMany(ctx context.Context, servers []string) map[string]*messages.Error {
	type answer struct {
		server string
		err    *messages.Error
	}
	ch := make(chan answer, len(servers))
	tokens := map[string]messages.Token{}
	for _, s := range servers {
		tok := m.sys.NewToken()
		tokens[s] = tok
		m.sys.Post(s, &actors.Refresh{Token: tok, Origin: messages.OriginModel,
			Reply: onceReply(func(err *messages.Error) { ch <- answer{s, err} })})
	}
	failures := map[string]*messages.Error{}
	answered := map[string]bool{}
	record := func(a answer) {
		answered[a.server] = true
		if a.err != nil {
			failures[a.server] = a.err
		}
	}
	done := ctx.Done()
	for len(answered) < len(servers) {
		select {
		case a := <-ch:
			record(a)
		case <-done:
			// Abort them all and keep collecting: the aborted replies are
			// prompt, and then every listing's lease is released.
			done = nil
			for _, s := range servers { // in order, not the map's: replayable (seed 2937)
				m.sys.Post(s, &messages.Abort{Token: tokens[s]})
			}
		case <-m.sys.Done():
			for len(ch) > 0 {
				record(<-ch)
			}
			for _, s := range servers {
				if !answered[s] {
					failures[s] = messages.Errorf(messages.KindShutdown, s, "the runtime is shutting down")
				}
			}
			return failures
		}
	}
	return failures
}

// onceReply makes a reply function idempotent.
func onceReply[R any](f func(R)) func(R) {
	var o sync.Once
	return func(r R) { o.Do(func() { f(r) }) }
}

// ProgressCaller is the caller tag of the call in flight that holds the
// progress token (nil for none: no such call, or one without a tag).
func (m *MCP) ProgressCaller(token string) any {
	v, _ := m.progressCallers.Load(token)
	return v
}
