package remote

import (
	"context"

	"sync"

	mcprt "github.com/mcprt/mcprt"
)

// ServerResources returns a server's resources as the shared catalog
// knows them; ok is false when they were never listed (or the member
// cannot be reached).
func (s *Session) ServerResources(server string) ([]mcprt.ResourceInfo, bool) {
	var out []mcprt.ResourceInfo
	err := s.get(context.Background(), opServerResources, server, nil, &out)
	return out, err == nil
}

// ServerTemplates returns a server's resource templates (see
// ServerResources).
func (s *Session) ServerTemplates(server string) ([]mcprt.TemplateInfo, bool) {
	var out []mcprt.TemplateInfo
	err := s.get(context.Background(), opServerTemplates, server, nil, &out)
	return out, err == nil
}

// ServerPrompts returns a server's prompts (see ServerResources).
func (s *Session) ServerPrompts(server string) ([]mcprt.PromptInfo, bool) {
	var out []mcprt.PromptInfo
	err := s.get(context.Background(), opServerPrompts, server, nil, &out)
	return out, err == nil
}

// Prompts returns every prompt the shared runtime knows.
func (s *Session) Prompts() []mcprt.PromptInfo {
	var out []mcprt.PromptInfo
	_ = s.get(context.Background(), opPrompts, "", nil, &out)
	return out
}

// GetPrompt gets a prompt (see mcprt.Runtime.GetPrompt).
func (s *Session) GetPrompt(ctx context.Context, server, name string, args map[string]string) (mcprt.PromptResult, error) {
	var out mcprt.PromptResult
	err := s.get(ctx, opGetPrompt, "", getPromptArgs{Server: server, Name: name, Arguments: args}, &out)
	return out, err
}

// ReadResource reads a resource (see mcprt.Runtime.ReadResource).
func (s *Session) ReadResource(ctx context.Context, server, uri string) (*mcprt.ReadResult, error) {
	var out mcprt.ReadResult
	if err := s.get(ctx, opReadResource, "", readArgs{Server: server, URI: uri}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReadTemplate reads a resource template with arguments (see
// mcprt.Runtime.ReadTemplate).
func (s *Session) ReadTemplate(ctx context.Context, server, template string, args map[string]any) (*mcprt.ReadResult, error) {
	var out mcprt.ReadResult
	if err := s.get(ctx, opReadResource, "", readArgs{Server: server, Template: template, Arguments: args}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// once makes f safe to call more than once, from any goroutine.
func once(f func()) func() {
	var o sync.Once
	return func() { o.Do(f) }
}
