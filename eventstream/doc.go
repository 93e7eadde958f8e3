// Package eventstream owns the MCP events protocol as pure state machines:
// catalog validation, the subscription state machine (opening → active ⇄
// reconnecting → stopped | ended | failed), the dedupe window, the batcher
// and the wakeup message format.
//
// Concurrency contract: nothing here runs by itself. There are no
// goroutines, channels, locks, contexts or clock reads; every function takes
// its inputs (a frame, a timer firing, "now") and returns effects (send this,
// arm that timer, deliver this batch) for an actor to execute. A value is
// owned by one actor and used from its goroutine only.
//
// The events issue fills this package; the runtime core only reserves it.
package eventstream
