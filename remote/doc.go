// Package remote shares one running runtime among many agent sessions
// across processes, over Proto.Actor's remote (gRPC).
//
// A serving process runs a full mcprt.Runtime and calls Serve: a
// protoactor actor system with remote listening on one address (127.0.0.1
// unless told otherwise), a gateway actor under a well-known name, and one
// session actor per attached session. A host calls Attach instead of
// mcprt.Start and gets a *Session with the host-facing API of a Runtime
// (tools, the typed API, prompts and resources, status, configuration
// issues, roots of its own, deliveries to its Host, the protocol-extension
// API: session_api.go, session_catalog.go, session_parity.go,
// protocol.go); its tools execute on the serving runtime, so every session
// shares one connection, one catalog and one process per server. A
// session's SetRoots has the member tell every server the roots changed;
// their questions then reach the session the pick rule chooses
// (router_pick.go, ops_parity.go).
//
// Every peer must present the serving process's token (token.go): the
// gRPC server refuses a stream or call without it before protoactor sees
// a byte. Sessions name tools and servers, never commands: nothing on the
// wire can make the serving runtime start anything its configuration does
// not name.
//
// A session process's hot messages both ways go on a link: a connection
// of its own to the member's port, handed out of the member's gRPC server
// after its transport handshake, the token in its first frame (link.go,
// link_accept.go, server_links.go); every member is a Proto.Actor cluster
// member with a membership of its own over the authenticated remote
// (cluster.go, membership.go, cluster_auth.go) and forwards requests for
// the servers of other live members (peers.go), advertising only the
// servers it can run (offers.go); a server's
// questions go to one session (asks.go, router_pick.go); events wakeups
// are split per session (router.go); a session's typed subscriptions
// (Session.Subscribe) run on the member, owned by its session actor, their
// deliveries queued (bounded) and sent in order on its link
// (ops_subscribe.go, session_subscribe.go). The rules for the sessions (calls
// and leases, subscription shares, liveness, questions, the split) are
// package sessions', a pure core the session actors execute.
//
// A session's protocol extensions: a namespace is registered with the
// runtime once and shared by the sessions that registered it with the same
// definition; each session's protocol sessions, streams and observers are
// its own (looked up by the ids it chose), end with it, and report through
// its outbox, which one pool goroutine at a time writes to it in order. A
// stream's handler runs on a goroutine of the stream's own in the
// session's process.
//
// Concurrency: the gateway and session actors run inline on the goroutine
// that posts to them and never wait, except a session actor writing to
// its own session's link (a session that stops reading blocks only its
// actor, until its timeout aborts the write). A tool call runs on a pool
// goroutine (pool.go) that posts its result back to its session actor;
// deliveries and notices reach session actors through the pool too, never
// inline from the runtime's actors. A typed subscription's handler only
// queues (at most 1,024 deliveries or 32 MiB, then it ends with an
// "overrun" status); one pool goroutine at a time drains its queue onto
// the session's link, so a stalled session holds only that drain. Each
// link has one goroutine reading it on each side, running the addressed
// actor inline. Server.Close and
// Session.Close wait for every goroutine they started (the pool's, the
// calls', the links', the membership's tick, the retries of servers it
// withdrew;
// protoactor's cluster gossiper keeps a log-throttle timer goroutine of
// its own for up to 60 s after). Timers (heartbeats, the session timeout,
// the membership's views) go through the injected clock. The gateway, the
// session actors and the receiver are supervised with the runtime's crash
// policy (supervise.go); a host callback that panics is a crash of its
// caller, never of the process. The design, its bounds
// and what is not done yet: docs/shared.md.
package remote
