package tools

import (
	"context"
	"sort"
	"strings"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
)

// Resolution: which exposed tool a name a model wrote means.
//
// A model writes the names the runtime showed it (a tool's own name,
// server_tool, the direct-tool name) and variants of them: the separators
// '-', '_', '.' and '/' swapped, case changed, a provider's normalisation
// (every other character as '_', cut to 64). Each exposed tool has a set of
// spellings:
//
//   - exact: its name; <server>/<name>; <server>_<name>; the direct-tool
//     name in each prefix mode (server, short, mcp), sanitized and cut as
//     DirectName makes it; and the name its direct tool was registered
//     under (with a collision suffix), when it is one;
//   - canonical: canonName of its name and of <prefix>_<name> for each
//     prefix mode, where canonName folds case and turns every run of
//     characters other than letters and digits into one '_'.
//
// A name that equals some tool's exact spelling resolves among the exact
// matches; only when no spelling is equal does the canonical form decide.
// Two or more tools at the deciding level are ambiguous_tool, never
// guessed; the error lists each candidate under a name that resolves to it
// alone. Ambiguity is judged over every enabled server: before a match by a
// tool's bare name (its own name, or its canonical form) is final, servers
// whose catalog was never listed are listed (once each; a server whose
// listing fails is judged without). A name that matched through a server's
// name (server_tool and the like) is judged over the catalogs known, so a
// slow or broken server never holds up calls that name another server. A
// host tool's name answers so only when no server offers the name. A name of one of the
// host's own tools, matching nothing of the servers, answers that the host
// tool is to be called directly.

// canonName folds a name to its canonical form.
func canonName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	sep := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(r)
			continue
		}
		sep = true
	}
	return b.String()
}

// prefixModes are the prefix modes whose spellings every tool answers to.
var prefixModes = []string{catalog.PrefixServer, catalog.PrefixShort, catalog.PrefixMCP}

// spellings returns an entry's exact and canonical spellings.
func spellings(e *entry) (exact, canon []string) {
	exact = []string{e.Name, e.Prefixed, e.Server + "/" + e.Name, e.Server + "_" + e.Name}
	canon = []string{canonName(e.Name)}
	for _, mode := range prefixModes {
		n, _ := catalog.DirectName(e.Server, mode, e.Name)
		exact = append(exact, n)
		canon = append(canon, canonName(catalog.ServerPrefix(e.Server, mode)+"_"+e.Name))
	}
	return dedupe(exact), dedupe(canon)
}

func dedupe(list []string) []string {
	sort.Strings(list)
	out := list[:0]
	for i, s := range list {
		if s != "" && (i == 0 || s != list[i-1]) {
			out = append(out, s)
		}
	}
	return out
}

// lookup returns the entries name means in v, at the deciding level.
func (m *MCP) lookup(v *view, name string) []int {
	v.nameIndexes()
	found := v.byExact[name]
	if d := m.directNames.Load(); d != nil {
		if k, ok := (*d)[name]; ok {
			for _, i := range v.byServer[k.server] {
				if v.entries[i].Name == k.tool && !containsInt(found, i) {
					found = append(append([]int(nil), found...), i)
				}
			}
		}
	}
	if len(found) == 0 {
		found = v.byCanon[canonName(name)]
	}
	return found
}

func containsInt(list []int, x int) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// resolve finds the exposed tool a name means, listing what must be listed
// to judge it (see above). A name nothing offers is tool_not_found, with
// suggestions.
func (m *MCP) resolve(ctx context.Context, name string) (*entry, *messages.Error) {
	v := m.view()
	found := m.lookup(v, name)
	bare := false
	for _, i := range found {
		bare = bare || v.entries[i].Name == name || canonName(v.entries[i].Name) == canonName(name)
	}
	var pending []string
	for _, s := range m.cfg.order {
		c := v.snap.Server(s)
		switch {
		case m.cfg.byName[s].Disabled:
		case !c.Known() && (len(found) == 0 || bare && !m.judged(s)):
			pending = append(pending, s)
		case (c.Stale || c.Err != nil) && len(found) == 0:
			pending = append(pending, s)
		}
	}
	var failures map[string]*messages.Error
	if len(pending) > 0 && m.sys != nil {
		failures = m.refreshMany(ctx, pending)
		if ctx.Err() != nil {
			return nil, abandoned(pending, failures)
		}
		for _, s := range pending {
			m.tried.Store(s, true)
		}
		v = m.view()
		found = m.lookup(v, name)
	}
	switch {
	case len(found) == 1:
		return &v.entries[found[0]], nil
	case len(found) > 1:
		return nil, m.ambiguous(v, name, found)
	}
	if err := m.prefixedDisabled(name); err != nil {
		return nil, err
	}
	if host := m.hostTool(name); host != "" {
		return nil, hostToolError(host)
	}
	if len(m.cfg.order) == 1 && failures[m.cfg.order[0]] != nil {
		return nil, failures[m.cfg.order[0]]
	}
	// A name that starts with a server's name whose listing failed gets
	// that failure (the longest such server name), not "not found".
	best := ""
	for s, err := range failures {
		if p := canonName(s) + "_"; err != nil && strings.HasPrefix(canonName(name), p) && len(s) > len(best) {
			best = s
		}
	}
	if best != "" {
		return nil, failures[best]
	}
	if err := m.listingFailure(failures); err != nil {
		return nil, err
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

// abandoned answers a caller who gave up while servers were listed for
// it, without looking at the catalog: the reply of a listing aborted for
// the caller wakes it from inside the server actor's turn, which may go
// on (in the same turn) to complete the very listing it abandoned, so what
// the catalog held when the caller read it would depend on when its
// goroutine ran, not on the order the actor saw its messages (seed 745 of
// the long campaign: the tool was either found and called, or not). The
// answer is the first listing aborted for the caller, in server order, or
// a plain aborted when every listing had finished.
func abandoned(pending []string, failures map[string]*messages.Error) *messages.Error {
	for _, s := range pending {
		if f := failures[s]; f != nil && f.Kind == messages.KindAborted {
			return f
		}
	}
	return messages.Errorf(messages.KindAborted, "", "cancelled by the caller")
}

// judged reports whether a listing of server was already tried for
// judging a name (a server that cannot be listed is not tried on every
// call).
func (m *MCP) judged(server string) bool {
	_, ok := m.tried.Load(server)
	return ok
}

// match resolves name against the catalog as it is, listing nothing (ok
// false: no match).
func (m *MCP) match(name string) (*entry, *messages.Error, bool) {
	v := m.view()
	found := m.lookup(v, name)
	switch len(found) {
	case 0:
		if err := m.prefixedDisabled(name); err != nil {
			return nil, err, true
		}
		if host := m.hostTool(name); host != "" {
			return nil, hostToolError(host), true
		}
		return nil, nil, false
	case 1:
		return &v.entries[found[0]], nil, true
	}
	return nil, m.ambiguous(v, name, found), true
}

// ambiguous is the error for a name several tools answer to: each
// candidate under a name that resolves to it alone.
func (m *MCP) ambiguous(v *view, name string, found []int) *messages.Error {
	var forms []string
	for _, i := range found {
		forms = append(forms, m.uniqueName(v, &v.entries[i]))
	}
	return messages.Errorf(messages.KindAmbiguousTool, "", "tool name %s matches %d tools; call one of them by a name that is its alone: %s",
		quote(name), len(found), strings.Join(forms, ", "))
}

// uniqueName returns a name that resolves to e alone: its own name,
// server_name or server/name, whichever is first to be unique.
func (m *MCP) uniqueName(v *view, e *entry) string {
	for _, n := range []string{e.Name, e.Server + "_" + e.Name, e.Server + "/" + e.Name} {
		if got := m.lookup(v, n); len(got) == 1 && &v.entries[got[0]] == e {
			return n
		}
	}
	return e.Server + "/" + e.Name
}

// prefixedDisabled is server_disabled for a name that starts with a
// disabled server's name and a separator.
func (m *MCP) prefixedDisabled(name string) *messages.Error {
	cn := canonName(name)
	for _, s := range m.cfg.order {
		if !m.cfg.byName[s].Disabled {
			continue
		}
		if p := canonName(s) + "_"; strings.HasPrefix(cn, p) && len(cn) > len(p) {
			return messages.Errorf(messages.KindServerDisabled, s, "server is disabled in the configuration")
		}
	}
	return nil
}

// hostTool returns the host's own tool name means ("" when none).
func (m *MCP) hostTool(name string) string {
	cn := canonName(name)
	for _, h := range m.opts.HostTools {
		if h == name {
			return h
		}
	}
	for _, h := range m.opts.HostTools {
		if canonName(h) == cn && cn != "" {
			return h
		}
	}
	return ""
}

func hostToolError(host string) *messages.Error {
	return messages.Errorf(messages.KindToolNotFound, "", "%s is one of the host's own tools, not an MCP tool: call it directly, not through mcp", quote(host))
}

// listingFailure returns the error of the one enabled server whose tools
// listing failed, when exactly one did: a name no listed server offers may
// be one of its tools, so the call gets that error rather than
// tool_not_found. The reason is the latest: this lookup's own listing
// failure when it listed the server again (which may be the runtime's
// shutdown), else the catalog's. With several such servers the name cannot
// be placed.
func (m *MCP) listingFailure(failures map[string]*messages.Error) *messages.Error {
	_, snap := m.src.catalog()
	var found *messages.Error
	for _, s := range m.cfg.order {
		err := snap.Server(s).Err
		if err == nil || m.cfg.byName[s].Disabled {
			continue
		}
		if found != nil {
			return nil
		}
		found = err
		if f := failures[s]; f != nil {
			found = f
		}
	}
	return found
}
