// Package simseam holds the runtime's seams for deterministic simulation
// and tests: the clock, the random source, the dispatcher that runs the
// actors, the connection port and the crash injector. A host never sets
// them; mcprt.Options.Sim is nil in production, which means the wall
// clock, a crypto-seeded random source, the inline dispatcher, the real
// transports and no injected crash.
//
// The simulator (simtests/) sets all of them; end-to-end tests set some
// (a manual clock, a seeded random source, a dialer that wraps the real
// transports, a crash injector). docs/architecture.md, "The seams", says
// what each replaces.
package simseam
