// Package testserver owns the configurable, real MCP server that the
// runtime's tests run as a separate process.
//
// A test binary calls [MainIfRequested] first thing in TestMain; a test then
// starts the server by re-executing its own binary with the environment
// variable [EnvArgs] holding the server's command line. [Main] runs the same
// server from a tiny main package.
//
// Modes (one of them):
//
//	--stdio            newline-delimited JSON-RPC on stdin/stdout (default)
//	--http ADDR        Streamable HTTP at http://ADDR/mcp
//	--sse ADDR         legacy HTTP+SSE only: GET /mcp is the event stream,
//	                   POST /message?sessionId=... carries requests and any
//	                   other method on /mcp answers 405
//	--socket PATH      the stdio line protocol on each Unix socket connection
//
// Modifiers: --post-status N (with --http: every POST answers status N with
// an empty body; with --sse: a POST on /mcp answers N instead of 405),
// --modern-only (initialize is refused with the JSON-RPC
// error -32601 [ModernOnlyMessage], over HTTP with status 200; server/discover
// and everything else works; stdio, socket and --http),
// --ignore-unknown (stdio and socket: requests other than initialize, ping,
// tools/list and tools/call are never answered), --garbage (stdio: a line
// "this is not json" precedes the first response), --page-size N,
// --extra-tools N, --instructions TEXT, --name NAME.
//
// The network modes print exactly one line, "LISTEN <url or path>", once
// listening, and serve until stdin reaches end of file (when stdin is a pipe
// or socket) or the process is killed. Addresses must be on 127.0.0.1. In
// stdio mode the server exits with status 0 at the end of stdin, after
// cancelling the calls still in flight (hang then logs its cancellation).
// A test binary built with -race pauses a second at every clean exit unless
// the server's environment has GORACE=atexit_sleep_ms=0.
//
// Tools: echo, add, hang, slow, crash, big, stderr, env, environ, cwd,
// grandchild, notify and fail (see [ToolNames]). hang sends one
// notifications/progress when its request carries a progress token, then
// blocks until cancelled and appends "cancelled" to the file named by
// [EnvCancelLog]. When [EnvNoteLog] names a file, the server appends the
// method of every notification it receives to it, one per line, in every
// mode.
//
// Concurrency contract: on a stdio or socket connection one goroutine reads
// and dispatches lines in order; notifications from the client (including
// notifications/cancelled) are handled on it, inline. Each request runs on a
// goroutine of its own. notifications/cancelled cancels the request's
// context, suppresses its response and blocks the reading goroutine until the
// handler has returned, so every later line is processed after the
// cancellation took effect. One pump goroutine per connection writes
// server-to-client notifications; a handler's response is written only after
// the notifications it sent, and a mutex serialises all writes. Over HTTP the
// mcp-go transports own the goroutines and cancellation follows the request's
// context (the client dropping the connection) or notifications/cancelled.
package testserver
