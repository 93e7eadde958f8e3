// Package eventsrv owns the server side of MCP events for our own servers
// (the demo server and the test server): the events protocol's methods,
// served through internal/mcpline since mcp-go cannot serve custom methods
// or keep _meta on notifications, with retention, cursors, heartbeats and
// the faults that tests and the demo inject. It knows nothing of the
// runtime.
//
// # Wire format
//
// events/list answers {"events": [descriptor...], "nextCursor"?}, a
// descriptor being {name, description?, delivery, inputSchema,
// payloadSchema?}; with Options.PageSize the list comes in pages and
// nextCursor is opaque (an unknown one is -32602).
//
// events/stream {name, arguments?, cursor: string|null, maxAgeMs?} is
// checked first and refused with a JSON-RPC error and no stream: -32602
// for bad params, arguments the type's Match refuses, or a cursor that is
// not this server's or belongs to another event type; -32011 (data
// {"kind":"event"}) for an unknown name; -32014 (data {"feature":
// "deliveryMode","value":"push"}) for a type without push; -32013 (data
// {"limit":"streams","max":N}) beyond Options.MaxStreams. Otherwise the
// stream sends, every frame with params._meta[
// "io.modelcontextprotocol/subscriptionId"] = the request id:
//   - notifications/events/active {cursor}: the client's cursor as given, or
//     for "from now" (null or absent) the current one; when the start is
//     truncated, a second active {cursor: fresh, truncated: true} follows
//     (the figma-listen behaviour the design notes record);
//   - notifications/events/event {eventId, name, timestamp (RFC 3339, UTC),
//     data, cursor}: the occurrences after the start that match the
//     arguments (replay first, then live ones, in order); the cursor is the
//     position after that occurrence;
//   - notifications/events/heartbeat {cursor} every Options.Heartbeat
//     (30 s by default), the cursor being the position checked up to, so it
//     advances over occurrences the arguments filter out;
//   - a later active {cursor, truncated: true} when occurrences were lost
//     for this stream (retention dropped them before it sent them, or a gap
//     fault);
//   - notifications/events/error and notifications/events/terminated
//     {error: {code, message, data?}} and notifications/events/list_changed
//     (no subscription id) only when a fault asks for them.
//
// A stream ends when the client leaves (notifications/cancelled, or the
// aborted POST on Streamable HTTP: nothing is sent) or when a fault ends
// it: the final result {}, a JSON-RPC error (any code, even a non-numeric
// one), notifications/cancelled from the server, no result, or a dropped
// connection.
//
// # Cursors and retention
//
// Each event type has a log of its occurrences numbered 1, 2, ... A cursor
// is base64url(JSON [epoch, name, seq]): "everything up to seq". The start
// of a stream is: from now for a null cursor (maxAgeMs then has no
// effect); after seq for a cursor of this epoch (clamped to the newest);
// the oldest retained occurrence for a cursor of another epoch (a server
// restarted without a state directory), which is truncated. A start is
// also truncated when retention dropped occurrences after it, unless
// maxAgeMs excludes them anyway; maxAgeMs skips retained occurrences older
// than now-maxAgeMs, and the start is truncated when a skipped one matched
// the arguments (the proposal counts the maxAgeMs floor as a gap). The
// dropped-occurrence check does not know whether they matched, so it errs
// towards reporting a gap.
//
// Retention keeps, per event type, at most Options.MaxEvents occurrences
// (1,000 by default) no older than Options.MaxAge (24 h by default). With
// Options.StateDir the epoch and the logs live on disk (an append-only
// JSON-lines file per type, rewritten at twice the retained count), so a
// restarted server places its old cursors; without it everything is in
// memory and a restart starts a new epoch.
//
// # Faults
//
// [Server.Inject] applies a [Fault] to open streams, [Server.Arm] to the
// next ones to open (before or after their acknowledgement). FaultTool,
// ArmTool, EmitTool and StreamsTool wrap them, and Publish, as MCP tools.
//
// # Concurrency contract
//
// A Server is safe for concurrent use. Each stream runs on its request's
// handler goroutine (mcpline starts it), which alone writes the stream's
// frames: it sleeps on a wake channel that Publish, Inject and its
// heartbeat timer (a clock timer) poke without blocking, and reads the log
// under the topic's lock, copying a batch at a time. A slow client
// therefore holds back only its own stream; retention does not wait for
// it, and occurrences dropped before it sent them become a gap. Publish
// appends under the topic's lock (and writes the state file there).
// Inject returns once every selected stream has applied the fault (or
// ended), after the stream has sent every occurrence published before the
// call. A type's Watch runs on the goroutine of the stream that opens
// first, its stop on the goroutine of the last one to leave. The package
// starts no goroutine of its own.
package eventsrv
