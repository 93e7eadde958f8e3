// Package testkit holds the small helpers the runtime's tests share:
// bounded test contexts, a broadcast signal and waiting on conditions
// without sleeping, a manual clock that records what was armed on it, a
// recording dialer over the real one (RecDialer), /proc checks for
// processes that must be gone, and certificate authorities made for a
// test (NewCA, CA.Issue).
//
// Concurrency contract: every helper may be used from parallel tests. Poll
// re-checks a condition on timers of the real clock and stops when the
// condition holds or the test's context ends; nothing else starts a
// goroutine.
package testkit
