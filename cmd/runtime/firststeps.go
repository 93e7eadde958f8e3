package main

import (
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/config"
)

// noServersHint is printed after `runtime status` when nothing is
// configured: where the user's servers probably are (other hosts' files,
// which `config detect` finds) and how to add one. It reads files only;
// with --config, --url, --stdio or --json it prints nothing. servers is
// how many servers the status showed (the configuration was read for it
// already: reading it again cost a cold status some 7% of its CPU), or -1
// when unknown.
func (g *globals) noServersHint(servers int) {
	if g.json || g.config != "" || g.url != "" || g.stdio != "" || servers > 0 {
		return
	}
	src, err := g.sources()
	if err != nil {
		return
	}
	if servers < 0 {
		if eff, err := config.Load(src); err != nil || len(eff.Servers) > 0 {
			return
		}
	}
	var hosts []string
	if reports, err := config.Detect(src); err == nil {
		for _, r := range reports {
			if r.Adds() {
				hosts = append(hosts, r.Kind)
			}
		}
	}
	if len(hosts) > 0 {
		fmt.Fprintf(g.stdout, "\nOther hosts on this machine have MCP servers (%s).\n"+
			"Run `runtime config detect` to see them, and `runtime config detect --write` to use them here.\n", strings.Join(hosts, ", "))
		return
	}
	fmt.Fprintln(g.stdout, "\nTo add a server, write a .mcp.json here, e.g."+
		"\n  {\"mcpServers\": {\"everything\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-everything\"]}}}"+
		"\nor run `runtime config detect` to import the servers of other hosts (Claude Code, Cursor, VS Code, ...). See docs/config.md.")
}
