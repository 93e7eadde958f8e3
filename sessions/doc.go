// Package sessions holds the rules of a shared runtime's member for the
// sessions attached to it (docs/shared.md), as one pure state machine:
//
//   - calls in flight (leases): a session's requests run on the runtime
//     one per id; a duplicate id is refused; a cancel cancels only the
//     session's own call; when the session ends, every call in flight is
//     cancelled and answered once with the error it ended with, and its
//     late outcome is dropped;
//   - subscription shares: a subscription belongs to the sessions whose
//     mcp_events subscribe made or reused it; an unsubscribe ends only the
//     caller's share, and the runtime's subscription ends with its last
//     owner (by unsubscribe or by the owner's end); list shows only the
//     session's own; a subscribe answered by reuse with a subscription
//     its last owner is ending runs again once that end is done
//     (closing.go);
//   - liveness: any message of a session re-arms its timer (a token, Beat);
//     the timer's firing with the live token ends the session;
//   - questions of servers (roots, elicitation): which session a question
//     goes to (Pick), which answers are taken (only what was asked), and
//     the answer of a question whose session ended;
//   - wakeups: which session gets which items of an events or status
//     wakeup (Split);
//   - typed subscriptions: which the session holds (made, or being made
//     by its subscribe), ended by its Stop, its end or on their own
//     (limits.go);
//   - each session's limits: subscriptions held and calls in flight; a
//     request beyond one is refused at once (limits.go).
//
// remote's session actors and router execute it against gRPC and
// protoactor (remote/session_actor.go, router.go); simtests drives the same
// rules through a simulated hop with drops and delays (simtests/shared_*.go).
//
// # Concurrency contract
//
// Nothing here runs by itself: there are no goroutines, channels, locks,
// contexts, clock reads or I/O. Every input names its session and returns
// the effects to execute, in order: arm or stop a timer, run or cancel a
// call, answer a call, tell a session it ended, pass or answer a question,
// end a runtime subscription, run a subscribe again, refuse a request,
// end a typed subscription, stop a session's actor. A Member is not safe
// for concurrent use: its owner serialises the inputs (remote holds one
// mutex around it; the simulator runs it on its one goroutine).
package sessions
