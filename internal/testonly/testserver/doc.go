// Package testserver owns the configurable, real MCP server that the
// runtime's tests run as a separate process.
//
// A test binary calls [MainIfRequested] first thing in TestMain; a test then
// starts the server by re-executing its own binary with the environment
// variable [EnvArgs] holding the server's command line. [Main] runs the same
// server from a tiny main package.
//
// # Modes
//
// One of them:
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
// "this is not json" precedes the first response), --stray-response (stdio:
// a response with id "stray-1", to no request, precedes the first
// response), --close-input-on METHOD
// (stdio and socket: when a request of METHOD arrives the server closes its
// input before answering it, stdin's read end or the socket's read side
// with shutdown(SHUT_RD), and keeps writing: the client's next write fails
// while its reader sees no end of file), --page-size N,
// --extra-tools N, --instructions TEXT, --name NAME, and the events flags
// below.
//
// The network modes print exactly one line, "LISTEN <url or path>", once
// listening, and serve until stdin reaches end of file (when stdin is a pipe
// or socket) or the process is killed. Addresses must be on 127.0.0.1. In
// stdio mode the server exits with status 0 at the end of stdin, after
// cancelling the calls still in flight (hang then logs its cancellation).
// A test binary built with -race pauses a second at every clean exit unless
// the server's environment has GORACE=atexit_sleep_ms=0.
//
// # Tools
//
// echo, add, hang, slow, crash, big, stderr, env, environ, cwd,
// grandchild, notify, fail and header (see [ToolNames]). hang sends one
// notifications/progress when its request carries a progress token, then
// blocks until cancelled and appends "cancelled" to the file named by
// [EnvCancelLog].
//
// # Protocol extension "example"
//
// Served in every mode and with both
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
// # Protocol extension "events"
//
// The events protocol (internal/eventsrv; the wire format of
// ../shared/design/events-protocol.md), served in every mode and with both
// handshakes:
//   - events/list: [EventTest] (arguments {"tag"?: string, "reject"?:
//     bool}: a tag keeps the occurrences whose data.tag equals it, reject
//     is refused with -32602), [EventOther] (every occurrence),
//     [EventPollOnly] and [EventWebhookOnly] (no push: -32014), then
//     --events-extra-types N types "extra.000"...; --events-page-size N
//     pages the list;
//   - events/stream {name, arguments, cursor, maxAgeMs}: active, events
//     with cursors, heartbeats every --events-heartbeat-ms (default 30000;
//     0: none), replay after a cursor, a second active {truncated: true}
//     for a cursor older than retention (--events-retention N occurrences
//     per type, default 1000; --events-max-age-ms, default a day),
//     -32011/-32014/-32602 refusals; every frame carries
//     params._meta["io.modelcontextprotocol/subscriptionId"] = the request
//     id. --events-state DIR keeps the logs, so a restarted server places
//     the old cursors.
//
// # Events tools
//
// With --events the server also has four tools that drive it (their
// results are JSON text):
//   - events_emit {name, data?, count? (default 1, at most 100000), size?,
//     eventId?}: publishes count occurrences with data (default {"n":i});
//     size pads them to {"n":i,"padding":size characters}; eventId gives
//     them all that id (duplicates). Answers {"emitted","first","last"}
//     (eventIds).
//   - events_fault {fault, name?, subscription?, count?, bytes?, ms?,
//     code?, message?, data?, frame?}: applies a fault to the open streams
//     (all, of event type name, or the one whose request id is subscription,
//     compact JSON such as "7" or "\"mcprt-1\""), answering {"streams":n}
//     once each has applied it, after it sent what was published before:
//     stall (no events, no heartbeats; for ms, or until resume), resume,
//     heartbeat (one now), gap (skip what is pending; active {truncated}),
//     duplicate (the last count sent, default 1, again), error
//     (notifications/events/error, default code -32603, data
//     {"reason":"upstream_error"}), terminate (notifications/events/
//     terminated, default -32012, then silence until the client leaves),
//     end (final result {}), rpc_error (a JSON-RPC error: code any JSON,
//     default -32000, a non-numeric one sent as it is; frame "no_code"
//     leaves it out), cancel (notifications/cancelled from the server),
//     drop (no result: on Streamable HTTP the response ends), disconnect
//     (stdio: the process exits; socket and legacy SSE: the session ends;
//     Streamable HTTP: the response ends; the tool call itself is still
//     answered), malformed (frame: json, event_id_number, event_id_long,
//     wrong_name, no_data, timestamp_long, cursor_number, no_subscription,
//     wrong_subscription), oversized (an event with a data string of bytes
//     bytes, default 16 MiB + 1), list_changed.
//   - events_arm {fault, phase? ("before_active", the default, or
//     "after_active"), name?, times? (default 1), ...}: the next times
//     streams to open suffer the fault: before their acknowledgement (drop,
//     disconnect, rpc_error, cancel: the stream fails to open; stall: the
//     acknowledgement waits for a resume; delay {ms}: a slow activation) or
//     right after it.
//   - events_streams {}: {"streams":[{subscription, name, cursor, active,
//     stalled}]}, the open streams.
//
// # Logs
//
// When [EnvNoteLog] names a file, the server appends the method of
// every notification it receives to it, one per line, in every mode, and
// for notifications/cancelled a second line, [CancelNote]
// ("notifications/cancelled <requestId as JSON>"). When [EnvRequestLog] names a
// file, it appends one JSON [RequestRecord] per request received:
// {"method","id","meta" (params._meta or null),"mcpMethod","mcpName" (the
// HTTP headers, or ""),"params" (the whole params, or null)};
// [ReadRequestLog] reads it back.
//
// # Concurrency contract
//
// On a stdio or socket connection one goroutine reads
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
