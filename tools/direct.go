package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
)

// DirectWarnAt is how many direct tools make the runtime warn: each costs
// prompt tokens on every turn.
const DirectWarnAt = 75

// Surface is the set of tools the runtime offers beside (or instead of)
// the proxy tool at one moment of the catalog.
type Surface struct {
	// Direct are the direct tools, in configuration order of their servers
	// and listing order of their tools.
	Direct []Tool
	// Issues describe every tool that was selected but not registered: an
	// input schema a provider would reject, or a name collision. They
	// never contain schema contents.
	Issues []string
	// Complete is true when every server with direct tools has a known
	// catalog (from the cache or a listing).
	Complete bool
	// AllDirect is true when every enabled server exposes all its tools
	// directly.
	AllDirect bool
	// Waiting names the servers with direct tools whose catalog is not
	// known yet.
	Waiting []string
	// Changed names (server/tool) the direct tools whose tool has a new
	// definition (fingerprint) since the previous Surface: the host must
	// register the tools again; until then a call through the old
	// registration is refused, never sent to the new definition.
	Changed []string
}

// directSelection says which of a server's tools are direct.
type directSelection struct {
	all   bool
	names map[string]bool
}

func (d directSelection) any() bool { return d.all || len(d.names) > 0 }

// selection returns a server's direct-tool selection: MCPRT_DIRECT_TOOLS
// when set ("srv" for all of a server's tools, "srv/tool" for one,
// "__none__" for none), else the server's directTools, else settings'.
func (m *MCP) selection(server string) directSelection {
	if env := strings.TrimSpace(m.opts.DirectEnv); env != "" {
		sel := directSelection{names: map[string]bool{}}
		for _, item := range strings.Split(env, ",") {
			item = strings.TrimSpace(item)
			if item == "__none__" {
				return directSelection{}
			}
			if s, tool, ok := strings.Cut(item, "/"); ok && s == server {
				sel.names[tool] = true
			} else if item == server {
				sel.all = true
			}
		}
		return sel
	}
	d := m.cfg.byName[server].DirectTools
	if d == nil {
		d = m.cfg.set.DirectTools
	}
	if d == nil {
		return directSelection{}
	}
	sel := directSelection{all: d.All, names: map[string]bool{}}
	for _, n := range d.Names {
		sel.names[n] = true
	}
	return sel
}

// Surface computes the direct tools from the catalog as it is now. reserved
// maps names the direct tools must not take (the host's tools, mcp) to who
// has them.
func (m *MCP) Surface(reserved map[string]string) Surface {
	v := m.view()
	out := Surface{Complete: true, AllDirect: true}
	var cands []catalog.Candidate
	schemas := map[string]json.RawMessage{}
	byKey := map[string]*entry{}
	enabled := 0
	for _, name := range m.cfg.order {
		if m.cfg.byName[name].Disabled {
			continue
		}
		enabled++
		sel := m.selection(name)
		if !sel.all {
			out.AllDirect = false
		}
		if !sel.any() {
			continue
		}
		if !v.snap.Server(name).Known() {
			out.Complete = false
			out.Waiting = append(out.Waiting, name)
			continue
		}
		mode := m.cfg.prefixMode(name)
		for _, i := range v.byServer[name] {
			e := &v.entries[i]
			if !sel.all && !sel.names[e.Name] {
				continue
			}
			schema := emptyObject
			if e.Tool != nil {
				s, rej := catalog.CheckInputSchema(e.Tool.InputSchema)
				if rej != nil {
					out.Issues = append(out.Issues, fmt.Sprintf("direct tool %s/%s is not registered: unsupported input schema (%s: %s)", name, e.Name, rej.Code, rej.Message))
					continue
				}
				schema = catalog.CleanSchemaText(s)
			}
			n, altered := catalog.DirectName(name, mode, e.Name)
			key := name + "\x00" + e.Name
			schemas[key], byKey[key] = schema, e
			cands = append(cands, catalog.Candidate{Server: name, Tool: e.Name, Name: n, Altered: altered})
		}
	}
	if enabled == 0 {
		out.AllDirect = false
	}
	named, skipped := catalog.AssignNames(cands, reserved)
	for _, s := range skipped {
		out.Issues = append(out.Issues, fmt.Sprintf("direct tool %s/%s is not registered: %s", s.Server, s.Tool, s.Reason))
	}
	sort.Strings(out.Issues)
	names := make(map[string]toolKey, len(named))
	prints := make(map[toolKey]string, len(named))
	before := m.directPrints.Load()
	for _, c := range named {
		k := toolKey{c.Server, c.Tool}
		names[c.Name] = k
		if e := byKey[c.Server+"\x00"+c.Tool]; e.Tool != nil {
			prints[k] = e.Tool.Fingerprint
			if before != nil && (*before)[k] != "" && (*before)[k] != prints[k] {
				out.Changed = append(out.Changed, c.Server+"/"+c.Tool)
			}
		}
	}
	m.directNames.Store(&names)
	m.directPrints.Store(&prints)
	for _, c := range named {
		key := c.Server + "\x00" + c.Tool
		out.Direct = append(out.Direct, m.directTool(c, byKey[key], schemas[key]))
	}
	return out
}

var emptyObject = json.RawMessage(`{"type":"object","properties":{}}`)

// directTool makes one direct tool. Its Execute finds the tool in the
// catalog as it is when the call begins (so the output schema is that
// moment's), and calls it exactly as the proxy would, unless the tool's
// definition changed since registration (then the call is refused).
func (m *MCP) directTool(c catalog.Candidate, e *entry, schema json.RawMessage) Tool {
	desc := strings.TrimSpace(e.Description())
	if desc == "" {
		desc = e.Name
	}
	desc += fmt.Sprintf(" (MCP server %s)", c.Server)
	server, tool := c.Server, c.Tool
	fingerprint := ""
	if e.Tool != nil {
		fingerprint = e.Tool.Fingerprint
	}
	return Tool{Name: c.Name, Description: desc, InputSchema: schema, Execute: func(ctx context.Context, raw json.RawMessage) Result {
		args, aerr := decodeToolArgs(raw)
		if aerr != nil {
			return failure(aerr)
		}
		v := m.view()
		for _, i := range v.byServer[server] {
			if cur := &v.entries[i]; cur.Name == tool {
				if cur.Tool != nil && cur.Tool.Fingerprint != fingerprint {
					return failure(messages.Errorf(messages.KindToolNotFound, server,
						"the tool %s changed (a new definition) since this direct tool was registered; read it with {\"describe\": %s} and call it through mcp, until the host registers the tools again",
						quote(tool), quote(m.uniqueName(v, cur))))
				}
				return m.invoke(ctx, cur, args)
			}
		}
		if err := v.snap.Server(server).Err; err != nil {
			return failure(err) // the server's tools listing failed
		}
		return failure(messages.Errorf(messages.KindToolNotFound, server, "tool %s is no longer offered by the server", quote(tool)))
	}}
}
