package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/messages"
)

// listTools lists a server's tools live (connecting it if needed).
func (m *MCP) listTools(ctx context.Context, server string) ([]actors.ToolInfo, *messages.Error) {
	r := m.sys.ListAll(ctx, server, "tools/list", "tools", messages.OriginModel)
	if r.Err != nil {
		return nil, r.Err
	}
	tools, _, _ := m.sys.Catalog().Tools(server)
	return tools, nil
}

func (m *MCP) list(ctx context.Context, server string) Result {
	tools, err := m.listTools(ctx, server)
	if err != nil {
		return failure(err)
	}
	lines := []string{fmt.Sprintf("%s (%d tools):", server, len(tools))}
	var out []map[string]any
	for _, t := range tools {
		lines = append(lines, "- "+t.Name+shortDescription(t.Description, 60))
		out = append(out, map[string]any{"name": t.Name, "description": t.Description})
	}
	return Result{Text: strings.Join(lines, "\n"), Details: map[string]any{"server": server, "tools": out, "count": len(tools)}}
}

// shortDescription renders " - first sentence…" capped at n runes.
func shortDescription(d string, n int) string {
	d = strings.Join(strings.Fields(d), " ")
	if d == "" {
		return ""
	}
	if i := strings.Index(d, ". "); i > 0 {
		d = d[:i+1]
	}
	if r := []rune(d); len(r) > n {
		d = string(r[:n-1]) + "…"
	}
	return " - " + d
}
