// Package supervisor holds the decisions of server supervision as pure
// state machines: the lifecycle of one configured server, the server
// actor's table of operations and its catalog refresh, and the restart and
// crash policies.
//
// # Lifecycle
//
// A Lifecycle decides, for one server, when to connect, when to close and
// when to retry: lazy, eager, keep-alive, lazy-keep-alive; idle close;
// health checks; reconnect backoff; operation leases; single-flight
// connect; failure memory.
//
// # Server
//
// A Server is everything a server actor decides, around its Lifecycle:
//
//   - the dial: the start slot, the startup deadline, progress while a
//     package installs (dial.go);
//   - the commands waiting behind a dial, and what each does once the
//     connection is up or will not come (waiters.go);
//   - the operations in flight: ids, leases, pages, resends of requests
//     whose connection ended before they were written (at most MaxResends),
//     aborts (ops.go); one timer for the earliest deadline, which stands
//     still while a request waits for a person (deadlines.go);
//   - the single-flight catalog refresh: callers join the refresh of their
//     connection, a refresh on a newer connection supersedes an older one
//     and takes over its callers, list methods run as steps, a connection
//     that ends under a refresh moves it whole, a list_changed during one
//     runs another after it (refresh.go); the catalog's admission rules
//     come in through Listing;
//   - shutdown, which waits for the last connection, and a crash, which
//     answers every caller but the one the root supervisor answers
//     (shutdown.go).
//
// # Offer
//
// An Offer decides, for one server of a shared runtime's member, whether
// the member advertises it to the other members of its cluster: offered
// until the server fails, backs off, is kept down, disabled or closed, or
// a request of it fails without reaching it (Unreached); offered again
// once it connects; a withdrawn server is retried by the member itself on
// a doubling schedule (Retry) while it is idle or failed (offer.go).
//
// # Concurrency contract
//
// None of it runs by itself. There are no goroutines, channels, locks,
// contexts or clock reads. A Lifecycle or a Server is owned by one server
// actor and driven from its goroutine: every input carries "now"
// explicitly and returns the effects the actor must execute, in order
// (dial, send, cancel, close, arm or disarm a timer, reply, publish the
// catalog). Timers are identified by kind and a token (a clock.Slot, as
// eventstream's are); a firing whose token is stale is ignored, so the
// actor never has to win a race against a timer it disarmed. Commands are held as opaque values (their reply
// functions are never called here): an effect names the command the actor
// answers.
//
// # Numbers
//
// The numbers (30 s health interval, 5 s health cap, 30 s to 5 min
// reconnect backoff, 60 s failure memory, 5 restarts in 60 s) are Policy
// and ServerConfig fields with documented defaults, so tests and
// configuration can change them.
package supervisor
