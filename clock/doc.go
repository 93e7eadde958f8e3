// Package clock owns time and randomness for the whole runtime.
//
// Every timer the runtime arms and every "now" it reads goes through a
// [Clock]; every identifier it makes comes from a [Rand]. Production uses
// [Real] and [NewCryptoRand]; tests and the deterministic simulator use
// [Manual] and [NewSeededRand], which make time and ids a pure function of
// the test's inputs and seed. A [Slot] is the pure half of a timer: the
// token by which a state machine (supervisor/, eventstream/) tells the
// firing of the timer it armed from a stale one; it reads no clock.
//
// Concurrency contract: [Real], [Manual] and the [Rand] implementations are
// safe for use by many goroutines. [Manual] runs due timer callbacks on the
// goroutine that calls [Manual.Advance] (or [Manual.FireNext]), one at a time,
// in order of due time and then of arming, never while holding its lock, so a
// callback may arm or stop timers. No other package may read the wall clock
// or sleep: a test in the module root enforces that.
package clock
