// Package mcpline is the transport fronts of our MCP servers (the demo
// server and the test server): it serves a [Backend] (the MCP server core,
// internal/mcpserve, or the test server's adapter over mcp-go's server)
// with custom methods next to the ordinary MCP ones, on every transport.
//
// # Fronts
//
//   - [Serve] and [ServeWith]: newline-delimited JSON-RPC (a process's stdin
//     and stdout, or one socket connection);
//   - [StreamableServer]: Streamable HTTP for a Backend (sessions, the GET
//     stream, DELETE, and 2026-07-28's sessionless requests);
//   - [StreamableHTTP]: wraps a Streamable HTTP handler (a
//     [StreamableServer], or mcp-go's for the test server), answering
//     custom requests with an event stream of their own;
//   - [LegacySSE]: the legacy HTTP+SSE transport (GET event stream, POSTed
//     messages answered 202).
//
// # Custom methods
//
// Custom methods are [Methods]: a [Handler] gets a context the client's
// cancellation ends and a [Call] to read the request and to write
// notifications ([Call.Send] stamps params._meta[SubscriptionIDKey] with
// the request id; [Call.Notify] does not; [Call.SendRaw] writes bytes as
// they are, for malformed frames). It ends the request with a result, an
// [*Error], [ErrServerCancel] or [ErrNoResult], or never (it waits for its
// context); [Call.Disconnect] ends it by dropping the connection (the
// response, on Streamable HTTP) as a broken link would. Ordinary messages go to
// the Backend's [Session] for the connection, whose server-initiated
// messages go out on the same connection.
//
// # Concurrency contract
//
// A line connection ([ServeWith]) and a legacy SSE
// session own the goroutines they start: one reading lines (line
// connections) and one per request in flight; messages are written one at
// a time, a handler's notifications before its response. A notifications/cancelled for a
// request in flight cancels its context, drops its response and returns
// only after its handler has returned (before the next line is read, or
// before the POST that carried it is answered). When ServeWith returns, or
// a legacy session's GET handler returns, every handler it started has
// returned. On Streamable HTTP a custom request runs on the POST's own
// goroutine and its frames are written there until the handler returns.
// A Call's methods may be called from any goroutine.
package mcpline
