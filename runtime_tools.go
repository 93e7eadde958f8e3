package mcprt

import (
	"context"
	"fmt"
	"slices"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/tools"
)

// buildTools assembles the agent-facing tools. A tool whose name the host
// already uses is never registered (it would shadow the host's); the
// collision is reported instead.
func (r *Runtime) buildTools(ctx context.Context, opts Options, eff *config.Effective) {
	for _, t := range []Tool{tools.NewMCP(r.sys).Tool()} {
		if slices.Contains(opts.HostTools, t.Name) {
			is := config.Issue{Message: fmt.Sprintf("tool %q is not registered: the host has a tool of that name", t.Name)}
			r.issues = append(r.issues, is)
			r.host.notify(ctx, messages.Notice{Level: messages.NoticeWarning, Text: is.String()})
			continue
		}
		r.tools = append(r.tools, t)
	}
}
