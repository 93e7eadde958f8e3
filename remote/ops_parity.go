package remote

import (
	"context"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// The rest of the host-facing API (session_parity.go): prompts from
// command words, resources rendered for the model, the configuration's
// issues, and a session's changed roots. Like every operation they name a
// server, a prompt, a URI or a template, never a command.
const (
	opGetPromptWords = "getPromptWords" // Runtime.GetPromptWords
	opRenderResource = "renderResource" // Runtime.RenderResource, or RenderTemplate named renderTemplate (readArgs)
	opConfigIssues   = "configIssues"   // Runtime.ConfigIssues
	opRootsChanged   = "rootsChanged"   // a session's roots changed: tell the servers
)

// renderTemplate is the name of an opRenderResource that renders a
// template.
const renderTemplate = "template"

// promptWordsArgs are opGetPromptWords' arguments.
type promptWordsArgs struct {
	Server string   `json:"server"`
	Name   string   `json:"name"`
	Words  []string `json:"words"`
}

// executeParity answers the operations above; ok is false for any other.
// fromMember is a request another member forwarded (it is not passed on
// again).
func (s *Server) executeParity(ctx context.Context, m *requestMsg, fromMember bool) (out any, ok bool, err error) {
	rt := s.rt
	switch m.Op {
	case opGetPromptWords:
		a, err := opArgs[promptWordsArgs](m)
		if err != nil {
			return nil, true, err
		}
		res, err := rt.GetPromptWords(ctx, a.Server, a.Name, a.Words)
		return res, true, err
	case opRenderResource:
		a, err := opArgs[readArgs](m)
		if err != nil {
			return nil, true, err
		}
		if m.Name == renderTemplate {
			return rt.RenderTemplate(ctx, a.Server, a.Template, a.Arguments), true, nil
		}
		return rt.RenderResource(ctx, a.Server, a.URI), true, nil
	case opConfigIssues:
		return rt.ConfigIssues(), true, nil
	case opRootsChanged:
		s.rootsChanged(ctx, fromMember)
		return struct{}{}, true, nil
	}
	return nil, false, nil
}

// rootsChanged tells every server of this member that the roots changed
// (notifications/roots/list_changed), and every member this one holds a
// session on, which tells its own. A server that asks again is answered
// by the session the pick rule chooses (router_pick.go), which is not
// always the one whose roots changed; that is why every server is told,
// not only those the session used: any of them may put its question to
// this session (the first attached answers a server nobody called).
//
// With Asks.Roots the runtime's roots hook asks the sessions (ClientHooks),
// so its own roots are unused and Runtime.SetRoots only announces the
// change; without it servers were offered no roots by the sessions, and
// nothing is told.
func (s *Server) rootsChanged(ctx context.Context, fromMember bool) {
	if !s.opts.Asks.Roots {
		return
	}
	s.rt.SetRoots(nil)
	if fromMember {
		return
	}
	for _, p := range s.allLinks() {
		p.mu.Lock()
		ps := p.s
		p.mu.Unlock()
		// Only a member holding a session of this one's can put a
		// question to this member's sessions; none is attached for this.
		if ps != nil && ps.alive() {
			_, _ = ps.request(ctx, opRootsChanged, "", nil)
		}
	}
}

// renderedResult decodes a rendered Result (opRenderResource, opTool); a
// request that failed is a failed Result with the error's code, as a
// runtime's own tools render one.
func renderedResult(b []byte, err error) mcprt.Result {
	if err != nil {
		return failure(messages.AsError(err, messages.KindInternal, ""))
	}
	r, err := readResult(b)
	if err != nil {
		return failure(messages.Errorf(messages.KindInternal, "", "the shared runtime's result is malformed: %s", err))
	}
	return r
}
