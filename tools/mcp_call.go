package tools

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/messages"
)

func (m *MCP) call(ctx context.Context, name string, rawArgs json.RawMessage) Result {
	args, aerr := decodeToolArgs(rawArgs)
	if aerr != nil {
		return failure(aerr)
	}
	server, tool, err := m.resolve(ctx, name)
	if err != nil {
		return failure(err)
	}
	params := make([]byte, 0, len(args)+len(tool)+32)
	params = append(params, `{"name":`...)
	quoted, _ := json.Marshal(tool)
	params = append(params, quoted...)
	params = append(params, `,"arguments":`...)
	params = append(params, args...)
	params = append(params, '}')
	r := m.sys.Request(ctx, server, "tools/call", params, messages.DeadlineCall, messages.OriginModel)
	if r.Err != nil {
		if r.Err.Kind == messages.KindRPC {
			e := *r.Err
			e.Kind = messages.KindToolError
			return failure(&e)
		}
		return failure(r.Err)
	}
	return renderCall(server, tool, r.Result)
}

// resolve finds which server offers a tool: an exact name first, then the
// same name with '-' and '_' treated alike, then a "server_tool" prefix.
// Servers never listed (or whose list changed) are listed first, in
// parallel, connecting them as their lifecycle allows.
func (m *MCP) resolve(ctx context.Context, name string) (string, string, *messages.Error) {
	names := m.sys.Names()
	if s, t, err, ok := m.match(name, names); ok {
		return s, t, err
	}
	var pending []string
	for _, s := range names {
		if _, known, stale := m.sys.Catalog().Snapshot().Tools(s); !known || stale {
			pending = append(pending, s)
		}
	}
	failures := m.listMany(ctx, pending)
	if s, t, err, ok := m.match(name, names); ok {
		return s, t, err
	}
	if len(names) == 1 && failures[names[0]] != nil {
		return "", "", failures[names[0]]
	}
	msg := "no configured server offers a tool named " + quote(name)
	if sugg := m.suggest(name, names); len(sugg) > 0 {
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
	return "", "", messages.Errorf(messages.KindToolNotFound, "", "%s", msg)
}

// listMany lists several servers at once and returns the failures by server.
func (m *MCP) listMany(ctx context.Context, servers []string) map[string]*messages.Error {
	type answer struct {
		server string
		reply  messages.ListReply
	}
	ch := make(chan answer, len(servers))
	tokens := map[string]messages.Token{}
	for _, s := range servers {
		s := s
		tok := m.sys.NewToken()
		tokens[s] = tok
		m.sys.Post(s, &messages.ListAll{Token: tok, Method: "tools/list", Field: "tools", Origin: messages.OriginModel,
			Reply: onceReply(func(r messages.ListReply) { ch <- answer{s, r} })})
	}
	failures := map[string]*messages.Error{}
	answered := map[string]bool{}
	record := func(a answer) {
		answered[a.server] = true
		if a.reply.Err != nil {
			failures[a.server] = a.reply.Err
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
			// Closed: a listing that reached an actor after it stopped is
			// never answered.
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

// match resolves name against the catalogs known now: exact name, then
// '-'/'_' and case folded, then a "server_tool" prefix. Each step is an
// index lookup in the catalog snapshot.
func (m *MCP) match(name string, servers []string) (string, string, *messages.Error, bool) {
	snap := m.sys.Catalog().Snapshot()
	found := snap.Exact(name)
	if len(found) == 0 {
		found = snap.Normalized(name)
	}
	if len(found) == 0 {
		found = byPrefix(snap, name, servers)
	}
	switch len(found) {
	case 0:
		return "", "", nil, false
	case 1:
		return found[0].Server, found[0].Tool, nil, true
	}
	where := make([]string, len(found))
	for i, f := range found {
		where[i] = f.Server + "/" + f.Tool
	}
	return "", "", messages.Errorf(messages.KindAmbiguousTool, "", "tool name %s matches several tools (%s); prefix it with the server name",
		quote(name), strings.Join(where, ", ")), true
}

// byPrefix matches "server_tool" (or server-tool, server__tool,
// server.tool), longest server name first.
func byPrefix(snap *actors.Snapshot, name string, servers []string) []actors.ToolRef {
	sorted := append([]string(nil), servers...)
	sort.Slice(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	for _, s := range sorted {
		for _, sep := range []string{"__", "_", "-", "."} {
			rest, ok := strings.CutPrefix(name, s+sep)
			if !ok || rest == "" {
				continue
			}
			for _, refs := range [][]actors.ToolRef{snap.Exact(rest), snap.Normalized(rest)} {
				for _, r := range refs {
					if r.Server == s {
						return []actors.ToolRef{r}
					}
				}
			}
		}
	}
	return nil
}

// suggest returns up to five known tool names close to name.
func (m *MCP) suggest(name string, servers []string) []string {
	norm := normalize(name)
	snap := m.sys.Catalog().Snapshot()
	var out []string
	for _, s := range servers {
		tools, _, _ := snap.Tools(s)
		for _, t := range tools {
			n := normalize(t.Name)
			if strings.Contains(n, norm) || strings.Contains(norm, n) {
				out = append(out, t.Name)
			}
		}
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = out[:5]
	}
	return out
}

func normalize(s string) string { return actors.NormalizeToolName(s) }

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
