// Package e2e holds the end-to-end tests of the embedding API: the whole
// runtime, started through mcprt.Start, against real MCP servers in their own
// processes (the test binary re-executed as internal/testonly/testserver, and
// server-everything from npm). It has no code of its own; the module root
// keeps only the embedding API, its examples and the repository-wide tests
// (layering, README).
//
// Tests here wait on events (a dial recorded, a timer armed, a status
// published), never on elapsed time; the runtime's timers run on a manual
// clock.
package e2e
