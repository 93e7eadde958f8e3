package main

import (
	"context"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// sidecarRuntime is what the sidecar needs of a runtime: an embedded
// *mcprt.Runtime or a session attached to a shared one (--attach,
// *remote.Session).
type sidecarRuntime interface {
	toolRuntime
	Status() mcprt.StatusSnapshot
	WatchStatus() (<-chan mcprt.StatusSnapshot, func())
	WatchTools() (<-chan struct{}, func())
	Connect(ctx context.Context, server string, fresh bool) (messages.ServerInfo, error)
	CallTool(ctx context.Context, server, tool string, args any) (*mcprt.CallResult, error)
	ServerTools(server string) ([]mcprt.ToolInfo, bool)
	ServerResources(server string) ([]mcprt.ResourceInfo, bool)
	ServerTemplates(server string) ([]mcprt.TemplateInfo, bool)
	ServerPrompts(server string) ([]mcprt.PromptInfo, bool)
	Prompts() []mcprt.PromptInfo
	GetPrompt(ctx context.Context, server, name string, args map[string]string) (mcprt.PromptResult, error)
	ReadResource(ctx context.Context, server, uri string) (*mcprt.ReadResult, error)
	ReadTemplate(ctx context.Context, server, template string, args map[string]any) (*mcprt.ReadResult, error)
}

// sidecarRuntime starts the sidecar's runtime, or attaches to the shared
// one named by --attach (local is then nil).
func (g *globals) sidecarRuntime(ctx context.Context, host mcprt.Host) (rt sidecarRuntime, local *mcprt.Runtime, err error) {
	if g.attach != "" {
		s, err := g.attachSession(ctx, host)
		if err != nil {
			return nil, nil, err
		}
		return s, nil, nil
	}
	o, err := g.options()
	if err != nil {
		return nil, nil, err
	}
	o.Host = host
	local, err = mcprt.Start(ctx, o)
	if err != nil {
		return nil, nil, usage("%s", err.Error())
	}
	return local, local, nil
}
