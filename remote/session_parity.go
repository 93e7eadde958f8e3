package remote

import (
	"context"
	"encoding/json"
	"sync"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// The rest of the host-facing API of an attached session (ops_parity.go):
// the same names, types and contracts as mcprt.Runtime's.

// GetPromptWords renders a prompt from command words (see
// mcprt.Runtime.GetPromptWords): the member matches them against the
// prompt as the shared catalog knows it.
func (s *Session) GetPromptWords(ctx context.Context, server, name string, words []string) (mcprt.PromptResult, error) {
	var out mcprt.PromptResult
	err := s.get(ctx, opGetPromptWords, "", promptWordsArgs{Server: server, Name: name, Words: words}, &out)
	return out, err
}

// RenderResource reads any resource of a server by URI, rendered for the
// model as the mcp tool renders it (see mcprt.Runtime.RenderResource). It
// is rendered on the member: audio and binary content is saved to files
// on the member's machine, as the tools' results through a session are. A
// failure, the member's unreachability included, is a Result with IsError
// and a stable code.
func (s *Session) RenderResource(ctx context.Context, server, uri string) mcprt.Result {
	return s.render(ctx, "", readArgs{Server: server, URI: uri})
}

// RenderTemplate reads a resource of a server's template as ReadTemplate
// does, rendered for the model as RenderResource renders it.
func (s *Session) RenderTemplate(ctx context.Context, server, template string, args map[string]any) mcprt.Result {
	return s.render(ctx, renderTemplate, readArgs{Server: server, Template: template, Arguments: args})
}

// render runs opRenderResource; kind is renderTemplate for a template.
func (s *Session) render(ctx context.Context, kind string, a readArgs) mcprt.Result {
	raw, err := json.Marshal(a)
	if err != nil {
		return renderedResult(nil, messages.Errorf(messages.KindInvalidArgs, a.Server, "arguments: %s", err))
	}
	return renderedResult(s.request(ctx, opRenderResource, kind, raw))
}

// ConfigIssues returns the serving configuration's problems as the member
// found them at its start, and the tools it could not register since (see
// mcprt.Runtime.ConfigIssues); nil when the member cannot be reached.
// A File names a file on the member's machine. Issues never hold a
// configuration value (a secret), only where it is and what is wrong.
func (s *Session) ConfigIssues() []config.Issue {
	var out []config.Issue
	_ = s.get(context.Background(), opConfigIssues, "", nil, &out)
	return out
}

// SetRoots replaces this session's roots and has the member tell its
// servers (notifications/roots/list_changed), as mcprt.Runtime.SetRoots
// does for a runtime's. A server's roots/list that the member puts to this
// session (docs/shared.md says which session a question goes to) is
// answered with them, unless AttachOptions.Client.ListRoots answers. Every
// server of the member is told, and every member it reaches servers of,
// since any of them may ask this session; each asks again and gets the
// answer of the session the pick rule chooses. SetRoots returns once the
// member has told them (or cannot be reached). It has no effect when
// AttachOptions.Client offered no roots (Roots and ListRoots nil), as a
// runtime's without Options.Client.Roots, or when the member lets servers
// ask no roots (ServeOptions.Asks).
func (s *Session) SetRoots(roots []mcprt.Root) {
	if !s.roots.set(s.client, roots) {
		return
	}
	_, _ = s.request(context.Background(), opRootsChanged, "", nil)
}

// sessionRoots are a session's roots: AttachOptions.Client.Roots until
// SetRoots replaces them.
type sessionRoots struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	changed bool
	list    []mcprt.Root
}

// set replaces the roots; false when the session offers none.
func (r *sessionRoots) set(h mcprt.ClientHooks, roots []mcprt.Root) bool {
	if h.Roots == nil && h.ListRoots == nil {
		return false
	}
	r.mu.Lock()
	r.changed, r.list = true, append([]mcprt.Root{}, roots...)
	r.mu.Unlock()
	return true
}

// current returns the roots to answer with; ok is false when the session
// offers none.
func (r *sessionRoots) current(h mcprt.ClientHooks) (roots []mcprt.Root, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed {
		return r.list, true
	}
	if h.Roots == nil {
		return nil, false
	}
	return h.Roots, true
}
