package tools

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// Search paging defaults.
const (
	defaultLimit      = 12
	searchDescription = 120
)

// search is the search mode: ranked (or, with regex, matched) tools over
// every server's catalog (cache included), never connecting anything.
func (m *MCP) search(ctx context.Context, a mcpArgs) Result {
	q := strings.TrimSpace(*a.Search)
	if a.Server != "" {
		if _, ok := m.cfg.byName[a.Server]; !ok {
			return failure(m.notConfigured(a.Server))
		}
	}
	if q == "" {
		if a.Server != "" {
			return m.list(ctx, a.Server)
		}
		return failure(messages.Errorf(messages.KindInvalidArgs, "", `search needs words, e.g. {"search": "read file"}`))
	}
	limit, offset := defaultLimit, 0
	if a.Limit != nil && *a.Limit > 0 {
		limit = *a.Limit
	}
	if a.Offset != nil && *a.Offset > 0 {
		offset = *a.Offset
	}
	v := m.view()
	ix := v.searchIndex()
	var keep func(int) bool
	if a.Server != "" {
		keep = func(i int) bool { return v.entries[i].Server == a.Server }
	}
	var hits []catalog.Hit
	total := -1
	if a.Regex {
		if len(q) > catalog.MaxRegexLen {
			return failure(messages.Errorf(messages.KindInvalidArgs, "", "a regular expression may have at most %d characters", catalog.MaxRegexLen))
		}
		re, err := regexp.Compile(q)
		if err != nil {
			return failure(messages.Errorf(messages.KindInvalidArgs, "", "not a valid regular expression (RE2 syntax)"))
		}
		hits = ix.Regex(re, keep)
	} else {
		hits, total = ix.SearchTop(q, keep, offset+limit)
	}
	if total < 0 {
		total = len(hits)
	}
	page := hits[min(offset, len(hits)):min(offset+limit, len(hits))]
	host := ""
	if a.Server == "" && offset == 0 {
		host = m.hostMatches(q, a.Regex)
	}
	if total == 0 {
		text := host + fmt.Sprintf("No MCP tools match %s.", quote(q))
		if host == "" {
			text = fmt.Sprintf("No tools match %s.", quote(q))
		}
		if unknown := m.unlisted(v, a.Server); len(unknown) > 0 {
			text += " Not listed yet (connect them to search their tools): " + strings.Join(unknown, ", ") + "."
		}
		return Result{Text: text, Details: map[string]any{"matches": []any{}, "count": 0, "hasMore": false, "query": q}}
	}
	schemas := a.IncludeSchemas == nil || *a.IncludeSchemas
	lines := []string{fmt.Sprintf("Found %d %s matching %s:", total, plural(total, "tool"), quote(q))}
	matches := make([]map[string]any, 0, len(page))
	for _, h := range page {
		e := &v.entries[h.Doc]
		lines = append(lines, fmt.Sprintf("- %s (%s)%s%s", m.callName(v, e), e.Server, unsupportedMark(e), shortDescription(e.Description(), searchDescription)))
		if schemas && e.Tool != nil {
			if p := renderParameters(e.Tool.InputSchema, "    "); p != "" {
				lines = append(lines, "  Parameters:\n"+p)
			}
		}
		match := map[string]any{"server": e.Server, "tool": e.Name, "score": h.Score}
		if e.Tool != nil && e.Tool.Unsupported != nil {
			match["unsupported"] = e.Tool.Unsupported.Code
		}
		matches = append(matches, match)
	}
	lines[0] = host + lines[0]
	details := map[string]any{"matches": matches, "count": total, "hasMore": offset+len(page) < total, "query": q}
	if offset+len(page) < total {
		next := offset + len(page)
		lines = append(lines, fmt.Sprintf("%d-%d of %d — offset: %d for more", offset+1, next, total, next))
		details["nextOffset"] = next
	}
	return Result{Text: strings.Join(lines, "\n"), Details: details}
}

// hostMatches lists the host's own tools whose names match the query (a
// word of it, or the regular expression), marked as the host's, or "".
func (m *MCP) hostMatches(q string, regex bool) string {
	var re *regexp.Regexp
	if regex {
		re, _ = regexp.Compile(q)
	}
	var found []string
	for _, h := range m.opts.HostTools {
		ch := canonName(h)
		hit := false
		if re != nil {
			hit = re.MatchString(h)
		} else {
			for _, w := range strings.Fields(q) {
				if cw := canonName(w); cw != "" && (strings.Contains(ch, cw) || ch == canonName(q)) {
					hit = true
				}
			}
		}
		if hit {
			found = append(found, "- "+h+" [host tool]")
		}
	}
	if len(found) == 0 {
		return ""
	}
	return "The host's own tools (call them directly, not through mcp):\n" + strings.Join(found, "\n") + "\n"
}

// unlisted names the enabled servers (of one, when server is set) whose
// tools are not known yet.
func (m *MCP) unlisted(v *view, server string) []string {
	var out []string
	for _, s := range v.cfg.order {
		if (server == "" || s == server) && !v.cfg.byName[s].Disabled && !v.snap.Server(s).Known() {
			out = append(out, s)
		}
	}
	return out
}

// callName is the name to call an entry by through the proxy: its own
// name when that is unambiguous, else server_name.
func (m *MCP) callName(v *view, e *entry) string {
	return m.uniqueName(v, e)
}

// describe is the describe mode: one tool's description and parameters,
// from the catalog (cache included), never connecting anything.
func (m *MCP) describe(name string) Result {
	e, err, ok := m.match(name)
	if ok && err != nil {
		return failure(err)
	}
	if !ok {
		msg := "no known tool is named " + quote(name)
		sugg := m.suggest(name, 5)
		if len(sugg) > 0 {
			msg += "; did you mean " + strings.Join(sugg, ", ") + "?"
		}
		res := failure(messages.Errorf(messages.KindToolNotFound, "", "%s", msg))
		if len(sugg) > 0 {
			res.Text += "\nDid you mean:\n- " + strings.Join(sugg, "\n- ")
			res.Details["suggestions"] = sugg
		}
		if unknown := m.unlisted(m.view(), ""); len(unknown) > 0 {
			res.Text += "\nNot listed yet: " + strings.Join(unknown, ", ")
		}
		return res
	}
	lines := []string{m.callName(m.view(), e), "Server: " + e.Server}
	details := map[string]any{"server": e.Server, "tool": e.Name}
	if e.Resource != nil {
		lines = append(lines, "Type: Resource ("+catalog.CleanText(e.Resource.URI)+")")
		details["uri"] = e.Resource.URI
	}
	if d := strings.TrimSpace(e.Description()); d != "" {
		lines = append(lines, "", d)
	}
	if e.Tool != nil {
		if p := renderParameters(e.Tool.InputSchema, "  "); p != "" {
			lines = append(lines, "", "Parameters:", p)
		} else {
			lines = append(lines, "", "Parameters: none")
		}
		details["inputSchema"] = e.Tool.InputSchema
		if len(e.Tool.OutputSchema) > 0 {
			details["outputSchema"] = e.Tool.OutputSchema
		}
	}
	return Result{Text: strings.Join(lines, "\n"), Details: details}
}

// suggest returns up to n known tool names close to name: names that
// contain it or that it contains first, then the smallest edit distances.
func (m *MCP) suggest(name string, n int) []string {
	v := m.view()
	norm := canonName(name)
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	seen := map[string]bool{}
	for i := range v.entries {
		e := &v.entries[i]
		cn := m.callName(v, e)
		if seen[cn] {
			continue
		}
		seen[cn] = true
		en := canonName(e.Name)
		d := config.Distance(norm, en)
		if strings.Contains(en, norm) || strings.Contains(norm, en) {
			d = 0
		}
		if d <= max(2, len(norm)/2) {
			cands = append(cands, cand{cn, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	out := make([]string, 0, n)
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, c.name)
	}
	return out
}

// plural returns word for one, word+"s" otherwise.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
