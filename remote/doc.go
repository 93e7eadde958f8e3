// Package remote shares one running runtime among many agent sessions
// across processes, over Proto.Actor's remote (gRPC).
//
// A serving process runs a full mcprt.Runtime and calls Serve: a
// protoactor actor system with remote listening on one address (127.0.0.1
// unless told otherwise), a gateway actor under a well-known name, and one
// session actor per attached session. A host calls Attach instead of
// mcprt.Start and gets a *Session with the host-facing API of a Runtime
// (tools, the typed API, status, deliveries to its Host); its tools execute
// on the serving runtime, so every session shares one connection, one
// catalog and one process per server.
//
// Every peer must present the serving process's token (token.go): the
// gRPC server refuses a stream or call without it before protoactor sees
// a byte. Sessions name tools and servers, never commands: nothing on the
// wire can make the serving runtime start anything its configuration does
// not name.
//
// Concurrency: the gateway and session actors never block; a tool call
// runs on a goroutine of its own that posts its result back to its session
// actor. Server.Close and Session.Close wait for every goroutine they
// started. Timers (heartbeats, the session timeout) go through the
// injected clock. The design, its bounds and what is not done yet:
// docs/shared.md.
package remote
