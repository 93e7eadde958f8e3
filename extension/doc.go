// Package extension holds the decisions of the protocol-extension API as
// pure code: validating a companion's protocol definition (one owner per
// namespace, methods inside the namespace, core namespaces reserved),
// checking a companion's params (no reserved _meta keys), the life of one
// stream or notification observer (declared methods only, ordered
// delivery, late frames dropped and counted, a failing handler ending only
// its own stream), and how a stream's final outcome becomes its End.
//
// Concurrency contract: nothing here runs by itself: no goroutines,
// channels, locks, contexts or clock reads. A Stream value is owned by one
// actor and driven from its goroutine with explicit inputs; it returns the
// effects for the actor to execute.
package extension
