// Package mcpserve is the MCP server core of our own servers (the demo
// server, and through it `runtime demo`): the protocol's server side
// without a transport. It answers initialize (with version negotiation,
// 2025-11-25 and older), server/discover and the per-request envelope of
// 2026-07-28 (versions, client capabilities, the standard HTTP headers,
// resultType, serverInfo and cache hints on results), ping,
// logging/setLevel, and the list, call, read and get methods of tools,
// resources, resource templates and prompts, with pagination. It sends
// list_changed notifications when the catalog changes after sessions
// began (to a 2025-11-25 session unasked; to a 2026-07-28 client on its
// subscriptions/listen request), and lets handlers send progress and log
// notifications for the request they serve ([Progress], [Log]).
//
// It uses mcp-go's mcp package for the protocol's types only, never
// mcp-go's server package, so that a binary linking it (cmd/runtime) does
// not link that package's dependencies (a JSON Schema library whose
// package initialisation costs every command some 10 ms;
// docs/performance.md).
//
// What it does not do (no server of ours needs it yet): requests to the
// client (sampling, elicitation, roots), resource subscriptions,
// completion, tasks and 2026-07-28's multi-round-trip input. Those methods
// are answered -32601 as a server without the capability answers them.
//
// # Ownership and concurrency
//
// A [Server] holds the catalog; it is safe for concurrent use, and
// handlers run on the caller's goroutine (the front's request goroutine).
// A [Session] is one client's session; fronts (internal/mcpline) open one
// per connection (a line connection, a legacy SSE session, a Streamable
// HTTP session) or one per request (a 2026-07-28 request over HTTP) and
// hand it every message that is not a custom method. Its send function
// (server-initiated messages) is called from any goroutine, one message
// at a time per call; messages a handler sends for its request go out
// before Handle returns, so they precede the response. The package starts
// no goroutines.
package mcpserve
