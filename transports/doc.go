// Package transports opens connections to MCP servers and bridges their
// blocking I/O to the runtime's asynchronous connection port
// (messages.Dialer and messages.Conn).
//
// # What it owns
//
//   - stdio: spawning the server in its own process group with a minimal
//     inherited environment plus its configured env (a command with a slash
//     is relative to its cwd, a bare name is looked up on its own PATH),
//     keeping the last 64 KiB of its stderr (mirrored to the host only for
//     debug: true; the last lines, masked, travel with a failure in
//     messages.Error.ServerStderr, never in its message), and on close
//     terminating and reaping it and signalling its whole group; a helper
//     that left the group and holds stderr open delays the reaping by at
//     most the grace period;
//   - Unix sockets: newline-delimited JSON-RPC as rmcp-mux serves it;
//   - the JSON-RPC request and response types and the small transport
//     interface every connection drives (rpc.go); mcp-go's client is not
//     used (it links mcp-go's server and its JSON Schema library, whose
//     initialisation every CLI command paid), only its mcp types;
//   - our own newline-delimited JSON-RPC codec for both, refusing lines over
//     16 MiB and output that is not JSON-RPC, and handing notifications
//     over as raw bytes;
//   - our own Streamable HTTP client (streamable.go, sseread.go: POSTs with
//     the session and protocol headers, JSON and SSE answers read on the
//     caller's goroutine, a response stream the server ends early resumed
//     with Last-Event-ID after its retry time, DELETE on close) and legacy
//     HTTP+SSE client (legacysse.go: the GET stream and its endpoint event,
//     answers matched by id), with an http.RoundTripper that bounds every
//     JSON body and every SSE event to 16 MiB, falls back to legacy SSE
//     when the endpoint refuses POST with 404, 405 or 406 (unless the
//     endpoint is pinned to 2026-07-28, which legacy SSE cannot carry),
//     puts no ceiling of its own on a response's wait, and closes its idle
//     connections when the connection closes;
//   - the handshake: protocolVersion auto (initialize 2025-11-25 first,
//     server/discover only when refused, also by an HTTP 4xx whose body is
//     a JSON-RPC error: initprobe.go), 2025-11-25 or 2026-07-28, and on
//     2026-07-28 connections the _meta envelope (client capabilities in
//     their 2026 form, the log level) and Mcp-Method/Mcp-Name headers on
//     every request;
//   - the client side: a server's requests (2025-11-25), taken off every
//     stream and answered by the Dialer's ServerRequests handler, at most
//     messages.MaxPendingServerRequests waiting per connection
//     (serverreq.go); the standalone GET stream, opened after the handshake
//     and resumed with Last-Event-ID (getstream.go, 2025-11-25 only); on
//     2026-07-28, multi round-trip requests: a tools/call, prompts/get or
//     resources/read answered input_required has its input requests
//     answered by the same handler and is retried with a new id,
//     inputResponses and the requestState as received, and a response
//     stream the server ends early has its request sent again with a new
//     id (mrtr.go);
//   - cancellation per transport: notifications/cancelled on stdio, sockets
//     and legacy SSE; abort of the one HTTP exchange on Streamable HTTP;
//   - error classification that never prints a URL, header or env value;
//   - HTTP hardening: redirects followed only within the origin, at most 5,
//     without Referer, a legacy SSE endpoint on another origin refused
//     (redirect.go); one budget for response bytes in flight across all
//     HTTP connections, over which a call fails with resource_exhausted
//     (budget.go); Streamable HTTP session loss (404, or 400 "No valid
//     session ID" on a POST) ends the connection so the next call starts a
//     new session;
//   - responses matched to requests on every transport: one whose id the
//     connection never sent is ignored and counted (unknown.go);
//   - containment: a panic on any goroutine of this package, or in a
//     callback net/http calls, ends only the request or connection it
//     served, with an internal error naming the server and the stack in the
//     debug log (guard.go); a write a stdio or socket server no longer
//     reads (it closed its stdin, or shut the socket's read side) ends the
//     connection ("server stopped reading its stdin").
//
// # Concurrency
//
// Concurrency contract: the Dialer's methods and every Conn method return
// at once; the work runs on goroutines the Dialer starts and counts (one per
// dial, one per in-flight request, one reader per stdio or socket
// connection, one per legacy SSE GET stream, one per closing connection).
// A Streamable HTTP exchange runs on the goroutine that sends it, its
// answer (JSON or SSE) read there too: the client starts no goroutine of
// its own. Outcomes reach the caller only
// through the Sink given to Dial. For one connection, the DialResult
// precedes all its traffic (notifications a server sends during the
// handshake are held until it has been delivered), every OpResult and
// ConnNotification precedes its ConnClosed, and ConnClosed is sent only
// after every goroutine of the connection has returned and any child
// process has been reaped. Dialer.Wait returns when all goroutines of all
// connections have ended. Time (grace periods) comes from the injected
// clock; the one exception is exec's WaitDelay, the wall-clock bound on a
// held stderr after a child exits. On stdio and sockets, a request whose
// frame is being written to a server that stopped reading cannot be
// cancelled (the frame cannot be cut short); it ends when the connection
// closes, which Close does at once.
package transports
