package mcprt

import (
	"context"
	"slices"

	"github.com/mcprt/mcprt/messages"
)

// ReadResource reads any resource of a server by URI (listed or not), as
// the model reads it through the mcp tool: each item after a source marker
// "[resource SERVER: URI]", at most 100 items and 16 MiB (seed 003), text
// cleaned of terminal and bidi controls and bounded by the output guard,
// images passed on, audio and binary content saved to files the text names.
// A URI with user information is refused. The server is connected as its
// lifecycle allows. A failure is a Result with IsError and a stable code.
func (r *Runtime) ReadResource(ctx context.Context, server, uri string) Result {
	if !slices.Contains(r.sys.Names(), server) {
		return errorResult(messages.Errorf(messages.KindServerNotFound, "", "no server named %q is configured", server))
	}
	t, err := r.mcp.ResolveRead(server, uri, nil)
	if err != nil {
		return errorResult(err)
	}
	return r.mcp.ReadResource(ctx, t.Server, t.URI)
}

// ReadTemplate reads a resource of a server's template (named by its
// uriTemplate or its name) expanded with args per RFC 6570 level 4: a
// string, number or boolean is a value, an array a list, an object an
// associative array; the arguments are bounded to 256 KiB. The result is
// as ReadResource's.
func (r *Runtime) ReadTemplate(ctx context.Context, server, template string, args map[string]any) Result {
	if !slices.Contains(r.sys.Names(), server) {
		return errorResult(messages.Errorf(messages.KindServerNotFound, "", "no server named %q is configured", server))
	}
	if args == nil {
		args = map[string]any{}
	}
	t, err := r.mcp.ResolveRead(server, template, args)
	if err != nil {
		return errorResult(err)
	}
	if t.Template == "" {
		return errorResult(messages.Errorf(messages.KindInvalidArgs, server, "%q is not a resource template of %s", template, server))
	}
	return r.mcp.ReadResource(ctx, t.Server, t.URI)
}

// errorResult renders an error as a failed Result with its stable code.
func errorResult(err *messages.Error) Result {
	details := map[string]any{"error": err.Code(), "message": err.Error()}
	if err.Server != "" {
		details["server"] = err.Server
	}
	return Result{Text: "Error: " + err.Error(), Details: details, IsError: true}
}
