package mcprt

import (
	"context"

	"github.com/mcprt/mcprt/messages"
)

// WithCaller tags the calls made with ctx (the `mcp` tool, CallTool,
// the typed API) with v, the host's own name for whoever made them: a
// host serving several users or sessions from one runtime passes each
// one's calls its own tag. The runtime never reads the tag; it hands it
// back where a server's message belongs to one of those calls:
//   - CallerOf(ctx) in a ClientHooks hook's context, for a server request
//     the transport ties to the call (one read from the call's own HTTP
//     response stream, or an input request of a 2026-07-28 call); a
//     request it cannot tie (on stdio, on the GET stream) has none;
//   - Progress.Caller, for progress of an `mcp` tool call in flight.
func WithCaller(ctx context.Context, v any) context.Context { return messages.WithCaller(ctx, v) }

// CallerOf returns the caller tag (WithCaller) of ctx: in a hook's
// context, the tag of the call the server's request belongs to, or nil.
func CallerOf(ctx context.Context) any { return messages.CallerOf(ctx) }
