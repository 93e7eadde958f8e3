package remote

import (
	"context"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// The catalog, prompt and resource operations.
const (
	opServerResources = "serverResources" // a server's listed resources
	opServerTemplates = "serverTemplates" // a server's listed templates
	opServerPrompts   = "serverPrompts"   // a server's listed prompts
	opPrompts         = "prompts"         // every known prompt
	opGetPrompt       = "getPrompt"       // get one prompt
	opReadResource    = "readResource"    // read a resource by URI, or a template with arguments
)

// getPromptArgs are opGetPrompt's arguments.
type getPromptArgs struct {
	Server    string            `json:"server"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
}

// readArgs are opReadResource's arguments: URI, or Template with
// Arguments.
type readArgs struct {
	Server    string         `json:"server"`
	URI       string         `json:"uri,omitempty"`
	Template  string         `json:"template,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// executeCatalog answers the operations above; ok is false for any other.
func executeCatalog(ctx context.Context, rt *mcprt.Runtime, m *requestMsg) (out any, ok bool, err error) {
	listed := func(items any, known bool) (any, bool, error) {
		if !known {
			return nil, true, messages.Errorf(messages.KindInvalidArgs, m.Name, "the catalog of %q is not listed yet (connect it first)", m.Name)
		}
		return items, true, nil
	}
	switch m.Op {
	case opServerResources:
		return listed(rt.ServerResources(m.Name))
	case opServerTemplates:
		return listed(rt.ServerTemplates(m.Name))
	case opServerPrompts:
		return listed(rt.ServerPrompts(m.Name))
	case opPrompts:
		return rt.Prompts(), true, nil
	case opGetPrompt:
		a, err := opArgs[getPromptArgs](m)
		if err != nil {
			return nil, true, err
		}
		res, err := rt.GetPrompt(ctx, a.Server, a.Name, a.Arguments)
		return res, true, err
	case opReadResource:
		a, err := opArgs[readArgs](m)
		if err != nil {
			return nil, true, err
		}
		if a.URI != "" {
			res, err := rt.ReadResource(ctx, a.Server, a.URI)
			return res, true, err
		}
		res, err := rt.ReadTemplate(ctx, a.Server, a.Template, a.Arguments)
		return res, true, err
	}
	return nil, false, nil
}
