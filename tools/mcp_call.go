package tools

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

func (m *MCP) call(ctx context.Context, name string, rawArgs json.RawMessage) Result {
	args, aerr := decodeToolArgs(rawArgs)
	if aerr != nil {
		return failure(aerr)
	}
	e, err := m.resolve(ctx, name)
	if err != nil {
		return failure(err)
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
	quoted, _ := json.Marshal(e.Name)
	params = append(params, quoted...)
	params = append(params, `,"arguments":`...)
	params = append(params, args...)
	params = append(params, '}')
	r := m.sys.Request(ctx, e.Server, "tools/call", params, messages.DeadlineCall, messages.OriginModel)
	if r.Err != nil {
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

// resolve finds the exposed tool a name means: the exact name, then the
// name with '-' and '_' (and case) alike, then "<server>_<tool>" with the
// longest matching server name (listing that server first if its catalog
// is unknown or changed, which connects it as its lifecycle allows). A name
// several tools answer to is refused (ambiguous_tool), never guessed. When
// nothing matches and some servers were never listed, they are listed (in
// parallel) and the name is resolved once more.
func (m *MCP) resolve(ctx context.Context, name string) (*entry, *messages.Error) {
	if e, err, ok := m.match(ctx, name, true); ok {
		return e, err
	}
	var pending []string
	_, snap := m.src.catalog()
	for _, s := range m.cfg.order {
		if c := snap.Server(s); !m.cfg.byName[s].Disabled && (!c.Known() || c.Stale) {
			pending = append(pending, s)
		}
	}
	failures := m.refreshMany(ctx, pending)
	if e, err, ok := m.match(ctx, name, true); ok {
		return e, err
	}
	if len(m.cfg.order) == 1 && failures[m.cfg.order[0]] != nil {
		return nil, failures[m.cfg.order[0]]
	}
	msg := "no configured server offers a tool named " + quote(name)
	if sugg := m.suggest(name, 5); len(sugg) > 0 {
		msg += "; did you mean " + strings.Join(sugg, ", ") + "?"
	}
	var down []string
	for _, s := range pending {
		if e := failures[s]; e != nil && e.Kind != messages.KindServerDisabled {
			down = append(down, s)
		}
	}
	if len(down) > 0 {
		msg += " (could not list " + strings.Join(down, ", ") + ")"
	}
	return nil, messages.Errorf(messages.KindToolNotFound, "", "%s", msg)
}

// match resolves name against the catalog as it is (ok false: no match).
// mayList allows the server-prefix step to list (and so connect) the named
// server when its catalog is unknown or changed.
func (m *MCP) match(ctx context.Context, name string, mayList bool) (*entry, *messages.Error, bool) {
	v := m.view()
	found := v.byName[name]
	if len(found) == 0 {
		found = v.byNorm[normalize(name)]
	}
	switch len(found) {
	case 0:
		return m.byPrefix(ctx, v, name, mayList)
	case 1:
		return &v.entries[found[0]], nil, true
	}
	where := make([]string, len(found))
	for i, f := range found {
		where[i] = v.entries[f].Server + "/" + v.entries[f].Name
	}
	return nil, messages.Errorf(messages.KindAmbiguousTool, "", "tool name %s matches several tools (%s); prefix it with the server name, e.g. %s",
		quote(name), strings.Join(where, ", "), quote(v.entries[found[0]].Server+"_"+v.entries[found[0]].Name)), true
}

// serverSeparators may stand between a server's name and a tool's.
var serverSeparators = []string{"__", "_", "-", "."}

// byPrefix matches "<server><sep><tool>", longest server name first. The
// server may also be named by its provider-valid tool prefix
// (config.ToolPrefix: "my server" as my_server), in any case ("github_x"
// for "GitHub"), as a model that saw direct tools' names writes it.
func (m *MCP) byPrefix(ctx context.Context, v *view, name string, mayList bool) (*entry, *messages.Error, bool) {
	sorted := append([]string(nil), m.cfg.order...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	for _, s := range sorted {
		for _, sep := range serverSeparators {
			rest, ok := strings.CutPrefix(name, s+sep)
			if p := config.ToolPrefix(s) + sep; !ok && len(name) > len(p) && strings.EqualFold(name[:len(p)], p) {
				rest, ok = name[len(p):], true
			}
			if !ok || rest == "" {
				continue
			}
			if m.cfg.byName[s].Disabled {
				return nil, messages.Errorf(messages.KindServerDisabled, s, "server is disabled in the configuration"), true
			}
			if c := v.snap.Server(s); mayList && (!c.Known() || c.Stale) {
				if err := m.refreshMany(ctx, []string{s})[s]; err != nil {
					return nil, err, true
				}
				v = m.view()
			}
			for _, i := range v.byServer[s] {
				if e := &v.entries[i]; e.Name == rest || normalize(e.Name) == normalize(rest) {
					return e, nil, true
				}
			}
		}
	}
	return nil, nil, false
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
			for s, tok := range tokens {
				m.sys.Post(s, &messages.Abort{Token: tok})
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

// normalize folds case and '-' versus '_' (catalog.NormalizeName).
var normalize = catalog.NormalizeName
