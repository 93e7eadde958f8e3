// Package simtests runs the real runtime, started through mcprt.Start, on
// simulated seams, and replays every run exactly from a seed.
//
// # Seams
//
// The four seams of mcprt.Options are all simulated:
//
//   - Dispatcher: a [Dispatcher] that never runs anything by itself. It
//     queues actor activations; the simulation loop picks the next one with
//     a seeded generator (or in FIFO order for scenario files).
//   - Clock: a [clock.Manual] shared by the runtime and the simulated
//     servers. When nothing is runnable the loop jumps it to the next timer,
//     so hours of virtual time take milliseconds.
//   - Rand: clock.NewSeededRand(seed).
//   - Dialer: the [World] itself, whose simulated MCP servers answer
//     tools/list (paginated) and tools/call, speak the protocol extension
//     "sim" (proto_*.go) and the MCP events wire format (events_*.go),
//     with latency and faults drawn from the seed or armed by a scenario
//     file.
//
// A shared runtime (shared_*.go) can stand in front of the runtime: a
// member running package sessions' rules, with sessions attached through
// simulated hops (latency, partitions, broken links) and the invariants
// held per session.
//
// # Traces and scenarios
//
// Everything that happens is appended to one trace with virtual timestamps:
// every frame crossing the connection port, every runtime timer firing,
// every simulated server's state change, every host result and every
// wakeup. The same seed gives a byte-identical trace; TestSim runs each
// seed's plain campaign, its events campaign and its shared campaign,
// each twice, and compares. TestScenarios walks testdata/*.txt, small scripts in the
// command language documented in docs/simulation.md, each command followed
// by the trace it must produce. The commands are defined in one file per
// kind: commands.go (servers, host calls, time, faults), commands_proto.go
// (protocol sessions, streams, observers), commands_events.go (events
// subscriptions and the events server's faults) and commands_shared.go
// (a member, its sessions and their hops).
//
// # Concurrency contract
//
// The test goroutine is the only one that runs
// activations, fires timers and delivers port outcomes. Host calls block, so
// each runs on its own goroutine, started one at a time with synctest.Wait
// in between, and the loop waits (synctest.Wait) for host goroutines to
// block again before every step. A host goroutine may run at any time (a
// reply wakes it from inside an activation, and the Go scheduler may
// preempt the simulation goroutine then), but whatever it posts to an
// actor is held by the post gate (gate.go, a mailbox middleware) until the
// loop waits between steps, and released one post at a time in host
// operation start order. So where a host goroutine's posts land depends on
// the seed alone, on one processor or several (-procs).
package simtests
