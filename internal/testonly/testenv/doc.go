// Package testenv finds and starts the real peers the runtime's tests talk
// to: the pinned @modelcontextprotocol/server-everything from npm
// (installed on first use into the repository's .cache/npm, under a file
// lock so parallel test binaries install it once), and the test server of
// internal/testserver run as a separate process in stdio, HTTP, SSE or
// Unix-socket mode.
//
// Concurrency contract: the helpers may be called from parallel tests. Each
// process it starts runs in its own process group, owned by the test that
// started it: a cleanup kills the group and reaps the process, and one
// goroutine per process forwards its output until it exits.
package testenv
