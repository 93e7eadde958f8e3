package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
)

// ResourceTarget is what a read names once resolved: the server, the URI
// to read, and the template it was expanded from ("" for a plain URI).
type ResourceTarget struct {
	Server, URI, Template string
}

// ResolveRead decides what {"read": what, "server": server, "args": args}
// reads: a template of the server (by its uriTemplate or its name)
// expanded with args per RFC 6570, or a URI as written (listed or not).
// Without a server, a listed resource or template names its server, and a
// single enabled server is the one. A URI with user information is refused
// and never repeated.
func (m *MCP) ResolveRead(server, what string, args map[string]any) (ResourceTarget, *messages.Error) {
	if catalog.HasUserinfo(what) {
		return ResourceTarget{}, messages.Errorf(messages.KindInvalidArgs, server, "resource URIs with user information (user:password@) are refused")
	}
	if server != "" {
		if err := m.configured(server); err != nil {
			return ResourceTarget{}, err
		}
	} else {
		server = m.readServer(what)
		if server == "" {
			return ResourceTarget{}, messages.Errorf(messages.KindInvalidArgs, "", `no listed resource or template is %s: say whose it is, {"read": %s, "server": "name"}`, quote(what), quote(what))
		}
	}
	c := m.catalogOf(server)
	for _, t := range c.ResourceTemplates {
		if t.URITemplate != what && t.Name != what {
			continue
		}
		uri, err := catalog.ExpandTemplate(t.URITemplate, args)
		if err != nil {
			return ResourceTarget{}, messages.Errorf(messages.KindInvalidArgs, server, "resource template %s: %s (its variables: %s)", quote(t.Name), err, strings.Join(catalog.TemplateVars(t.URITemplate), ", "))
		}
		return ResourceTarget{Server: server, URI: uri, Template: t.URITemplate}, nil
	}
	if len(args) > 0 {
		return ResourceTarget{}, messages.Errorf(messages.KindInvalidArgs, server, "args are for a resource template, and %s is none of %s's templates", quote(what), server)
	}
	return ResourceTarget{Server: server, URI: what}, nil
}

// readServer finds the server whose listed resource or template what is,
// or the only enabled server ("" when neither decides).
func (m *MCP) readServer(what string) string {
	_, snap := m.src.catalog()
	var found, enabled []string
	for _, s := range m.cfg.order {
		if m.cfg.byName[s].Disabled {
			continue
		}
		enabled = append(enabled, s)
		c := snap.Server(s)
		hit := false
		for _, r := range c.Resources {
			hit = hit || r.URI == what
		}
		for _, t := range c.ResourceTemplates {
			hit = hit || t.URITemplate == what || t.Name == what
		}
		if hit {
			found = append(found, s)
		}
	}
	switch {
	case len(found) == 1:
		return found[0]
	case len(found) == 0 && len(enabled) == 1:
		return enabled[0]
	}
	return ""
}

// ReadResource reads one resource by URI (resources/read) and renders it
// as the model reads it: each item after a source marker, bounded by seed
// 003's read limits and the output guard.
func (m *MCP) ReadResource(ctx context.Context, server, uri string) Result {
	if m.sys == nil {
		return failure(errCacheView)
	}
	if catalog.HasUserinfo(uri) {
		return failure(messages.Errorf(messages.KindInvalidArgs, server, "resource URIs with user information (user:password@) are refused"))
	}
	params, _ := json.Marshal(map[string]string{"uri": uri})
	r := m.sys.Request(ctx, server, "resources/read", params, messages.DeadlineCall, messages.OriginModel)
	if r.Err != nil {
		return failure(r.Err)
	}
	return m.renderResource(server, "", r.Result)
}

// read is the read mode.
func (m *MCP) read(ctx context.Context, a *mcpArgs) Result {
	var args map[string]any
	if hasArgs(a) {
		raw, aerr := decodeToolArgs(a.Args)
		if aerr != nil {
			return failure(aerr)
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			return failure(messages.Errorf(messages.KindInvalidArgs, "", "args of a template read must be a JSON object"))
		}
	}
	if args != nil && m.sys != nil {
		// A template is found in the catalog: list the servers never
		// listed first (connecting them as their lifecycles allow).
		var pending []string
		_, snap := m.src.catalog()
		for _, s := range m.cfg.order {
			if (a.Server == "" || a.Server == s) && !m.cfg.byName[s].Disabled && !snap.Server(s).Known() {
				pending = append(pending, s)
			}
		}
		if failures := m.refreshMany(ctx, pending); ctx.Err() != nil {
			return failure(abandoned(pending, failures))
		}
	}
	t, err := m.ResolveRead(a.Server, a.Read, args)
	if err != nil {
		return failure(err)
	}
	res := m.ReadResource(ctx, t.Server, t.URI)
	if !res.IsError {
		res.Details["uri"] = t.URI
		if t.Template != "" {
			res.Details["template"] = t.Template
		}
	}
	return res
}

// BoundText applies the output guard to text a host shows the model
// outside a tool call (a rendered prompt): controls removed, long text cut
// to a preview that names the file holding raw in full.
func (m *MCP) BoundText(text string, raw json.RawMessage) string {
	return m.guard(Result{Details: map[string]any{}}, text, raw, false).Text
}
