package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
)

// Lengths of the list mode's previews.
const (
	listDescription     = 50
	instructionsPreview = 300
)

// known returns server's catalog, listing it first (which connects the
// server as its lifecycle allows) when nothing is known about it; listed
// says it did.
func (m *MCP) known(ctx context.Context, server string) (c *actors.ServerCatalog, listed bool, err *messages.Error) {
	if err := m.configured(server); err != nil {
		return nil, false, err
	}
	if c := m.catalogOf(server); c.Known() {
		return c, false, nil
	}
	if err := m.refreshMany(ctx, []string{server})[server]; err != nil {
		return nil, true, err
	}
	return m.catalogOf(server), true, nil
}

// catalogOf returns server's catalog entry as it is now.
func (m *MCP) catalogOf(server string) *actors.ServerCatalog {
	_, snap := m.src.catalog()
	return snap.Server(server)
}

// notConfigured is server_not_found for a name that is not a usable
// server: skipped (and why), or unknown (and which servers there are).
func (m *MCP) notConfigured(server string) *messages.Error {
	if sk, skipped := m.skipped(server); skipped {
		return messages.Errorf(messages.KindServerNotFound, "", "server %s is configured but was skipped: %s", quote(server), sk.Reason)
	}
	if len(m.cfg.order) == 0 {
		return messages.Errorf(messages.KindServerNotFound, "", "no server named %s is configured (no valid servers remain)", quote(server))
	}
	return messages.Errorf(messages.KindServerNotFound, "", "no server named %s is configured (servers: %s)", quote(server), strings.Join(m.cfg.order, ", "))
}

// configured refuses a server that is not configured or is disabled.
func (m *MCP) configured(server string) *messages.Error {
	sc, ok := m.cfg.byName[server]
	switch {
	case !ok:
		return m.notConfigured(server)
	case sc.Disabled:
		return messages.Errorf(messages.KindServerDisabled, server, "server is disabled in the configuration")
	}
	return nil
}

// list is the list mode: a server's tools, resource templates, prompts and
// an instructions preview, from the catalog (cache included) when it is
// known; a server never listed is listed first.
func (m *MCP) list(ctx context.Context, server string) Result {
	return m.listed(ctx, server, false)
}

// listed is list; fresh says the caller has just listed the server
// (connect), which then counts as a listing made here.
func (m *MCP) listed(ctx context.Context, server string, fresh bool) Result {
	c, listed, err := m.known(ctx, server)
	listed = listed || fresh
	if err != nil {
		return failure(err)
	}
	if c.Err != nil {
		return failure(c.Err)
	}
	v := m.view()
	idx := v.byServer[server]
	// A listing just made came from a live connection: say so, rather than
	// read the status board, which the server's actor may be updating at
	// this moment (a crash right after it answered), so that the answer
	// depends on what the listing saw, not on when this goroutine ran.
	connected := listed
	if !listed {
		for _, st := range m.src.Statuses() {
			if st.Name == server {
				connected = st.State == messages.StateConnected
			}
		}
	}
	head := fmt.Sprintf("%s (%d tools", server, len(idx))
	if !connected {
		head += ", not connected, cached"
	}
	lines := []string{head + "):"}
	tools := make([]map[string]any, 0, len(idx))
	for _, i := range idx {
		e := &v.entries[i]
		lines = append(lines, "- "+e.Name+unsupportedMark(e)+shortDescription(e.Description(), listDescription))
		tools = append(tools, map[string]any{"name": e.Name, "description": e.Description()})
	}
	details := map[string]any{"server": server, "tools": tools, "count": len(idx), "cached": !connected}
	if len(c.ResourceTemplates) > 0 {
		lines = append(lines, "Resource templates:")
		for _, t := range c.ResourceTemplates {
			lines = append(lines, "- "+catalog.CleanText(t.URITemplate)+shortDescription(firstNonEmpty(t.Description, t.Name), listDescription))
		}
		details["resourceTemplates"] = c.ResourceTemplates
	}
	if len(c.Prompts) > 0 {
		lines = append(lines, "Prompts:")
		for _, p := range c.Prompts {
			lines = append(lines, "- "+promptSignature(p)+shortDescription(p.Description, listDescription))
		}
		details["prompts"] = c.Prompts
	}
	for _, n := range c.Notes {
		lines = append(lines, "Note: "+n)
	}
	var refused []string
	for _, r := range c.Rejections {
		if r.Code == catalog.CodeInvalidName || r.Code == catalog.CodeDuplicateName || r.Code == catalog.CodeMalformed {
			refused = append(refused, describeRejection(r))
		}
	}
	if len(refused) > 0 {
		details["refused"] = refused
		if len(refused) > catalog.MaxRejections {
			refused = append(refused[:catalog.MaxRejections], fmt.Sprintf("and %d more", len(refused)-catalog.MaxRejections))
		}
		lines = append(lines, "Not offered (the server's metadata breaks the catalog's rules):\n- "+strings.Join(refused, "\n- "))
	}
	if c.Instructions != "" {
		preview := clip(oneLine(c.Instructions), instructionsPreview)
		lines = append(lines, "Instructions: "+preview)
		if preview != oneLine(c.Instructions) {
			lines = append(lines, fmt.Sprintf(`(all of them: {"instructions": %s})`, quote(server)))
		}
	}
	return Result{Text: strings.Join(lines, "\n"), Details: details}
}

// unsupportedMark marks a tool whose input schema a model provider would
// refuse: callable through mcp, never a direct tool.
func unsupportedMark(e *entry) string {
	if e.Tool == nil || e.Tool.Unsupported == nil {
		return ""
	}
	return " [unsupported input schema: " + e.Tool.Unsupported.Code + "; call it through mcp]"
}

// promptSignature renders name(required, optional?).
func promptSignature(p catalog.Prompt) string {
	args := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		args[i] = a.Name
		if !a.Required {
			args[i] += "?"
		}
	}
	return p.Name + "(" + strings.Join(args, ", ") + ")"
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// connect is the connect mode: connect (replacing a live connection),
// list the catalog again, record it in the cache, and answer as list does.
func (m *MCP) connect(ctx context.Context, server string) Result {
	if err := m.configured(server); err != nil {
		if res, ok := m.peerConnect(ctx, server); ok {
			return res
		}
		return failure(err)
	}
	ch := make(chan *messages.Error, 1)
	tok := m.sys.NewToken()
	m.sys.Post(server, &actors.Refresh{Token: tok, Origin: messages.OriginExplicit, Fresh: true, Force: true, Reply: onceReply(func(e *messages.Error) { ch <- e })})
	select {
	case err := <-ch:
		if err != nil {
			return failure(err)
		}
	case <-ctx.Done():
		m.sys.Post(server, &messages.Abort{Token: tok})
		return failure(messages.Errorf(messages.KindAborted, server, "cancelled by the caller"))
	case <-m.sys.Done():
		return failure(messages.Errorf(messages.KindShutdown, server, "the runtime is shutting down"))
	}
	// The listing just made came from a live connection: list says so
	// without reading the status board, which the server's actor may be
	// updating while this goroutine runs (the race of seed 745, in the
	// connect mode).
	return m.listed(ctx, server, true)
}

// instructions is the instructions mode: a server's full usage guidance.
func (m *MCP) instructions(server string) Result {
	v := m.view() // another member's server too (peers.go)
	if _, ok := v.cfg.byName[server]; !ok {
		return failure(m.notConfigured(server))
	}
	c := v.snap.Server(server)
	text := c.Instructions
	switch {
	case text != "":
	case !c.Known():
		text = fmt.Sprintf(`%s: no instructions known yet (connect it first: {"connect": %s})`, server, quote(server))
	default:
		text = server + " gives no instructions."
	}
	return Result{Text: text, Details: map[string]any{"server": server, "instructions": c.Instructions}}
}

// shortDescription renders " - first sentence…" capped at n runes.
func shortDescription(d string, n int) string {
	d = oneLine(d)
	if d == "" {
		return ""
	}
	if i := strings.Index(d, ". "); i > 0 {
		d = d[:i+1]
	}
	return " - " + clip(d, n)
}
