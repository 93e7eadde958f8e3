// Package supervisor holds the decisions of server supervision as pure
// state machines: the lifecycle of one configured server (lazy, eager,
// keep-alive, lazy-keep-alive; idle close; health checks; reconnect
// backoff; operation leases; single-flight connect; failure memory) and the
// restart policy of crashed server actors.
//
// Concurrency contract: none of it runs by itself. There are no goroutines,
// channels, locks, contexts or clock reads. A Lifecycle is owned by one
// server actor and driven from its goroutine: every input carries "now"
// explicitly and returns the effects the actor must execute, in order
// (dial, close, arm or disarm a timer, release or fail waiting operations,
// run a health check). Timers are identified by kind and a token; a firing
// whose token is stale is ignored, so the actor never has to win a race
// against a timer it disarmed.
//
// The numbers (30 s health interval, 5 s health cap, 30 s to 5 min
// reconnect backoff, 60 s failure memory, 5 restarts in 60 s) are Policy
// fields with documented defaults, so tests and configuration can change
// them.
package supervisor
