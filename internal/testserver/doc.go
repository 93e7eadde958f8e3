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
//	--sse ADDR         legacy HTTP+SSE only (our own front,
//	                   mcpline.LegacySSE): GET /mcp is the event stream,
//	                   POST /message?sessionId=... carries messages and any
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
// grandchild, notify, fail and header (see [ToolNames]). hang sends one
// notifications/progress when its request carries a progress token, then
// blocks until cancelled and appends "cancelled" to the file named by
// [EnvCancelLog].
//
// Protocol extension "example", served in every mode and with both
// handshakes (through internal/mcpline's fronts, since mcp-go cannot serve
// custom methods):
//   - example/list answers {"items":["a","b"]};
//   - example/poke sends an unsolicited notifications/example/list_changed
//     (no subscription id), then answers {};
//   - example/stream ([StreamParams]: count, intervalMs, end, errorCode,
//     errorMessage, errorData, late) sends notifications/example/active,
//     one notifications/example/undeclared, then count
//     notifications/example/item {"n":1..count} intervalMs apart, all with
//     params._meta["io.modelcontextprotocol/subscriptionId"] = the request
//     id; then it ends as end says: "result" (default, {"sent":count}),
//     "error" (errorCode, default -32000; errorMessage; errorData as given),
//     "cancel" (the server sends notifications/cancelled {requestId}), "eof"
//     (no result; on Streamable HTTP the POST's response ends) or "never"
//     (until cancelled); then it sends late more items {"n":count+1...}
//     with the same subscription id (on Streamable HTTP on the same
//     response, before it closes; none after "eof" there). When its
//     context ends first (the client cancelled it: notifications/cancelled
//     on stdio, sockets and legacy SSE, the aborted POST on Streamable
//     HTTP; or the connection ended) it appends [StreamCancelLine] to the
//     file named by [EnvCancelLog] and still sends its late items.
//
// Logs: when [EnvNoteLog] names a file, the server appends the method of
// every notification it receives to it, one per line, in every mode, and
// for notifications/cancelled a second line, [CancelNote]
// ("notifications/cancelled <requestId as JSON>"). When [EnvRequestLog] names a
// file, it appends one JSON [RequestRecord] per request received:
// {"method","id","meta" (params._meta or null),"mcpMethod","mcpName" (the
// HTTP headers, or "")}; [ReadRequestLog] reads it back.
//
// Concurrency contract: on a stdio or socket connection one goroutine reads
// and dispatches lines in order; notifications from the client (including
// notifications/cancelled) are handled on it, inline. Each request runs on a
// goroutine of its own. notifications/cancelled cancels the request's
// context, suppresses its response and blocks the reading goroutine until the
// handler has returned, so every later line is processed after the
// cancellation took effect. One pump goroutine per connection writes
// server-to-client notifications; a handler's response is written only after
// the notifications it sent, and a mutex serialises all writes. A legacy SSE
// session behaves the same with POSTs in place of lines (a POSTed
// notifications/cancelled is answered once the handler has returned). On
// Streamable HTTP mcp-go owns the goroutines of ordinary requests, an
// example request runs on its POST's goroutine, and cancellation follows the
// request's context (the client dropping the connection).
package testserver
