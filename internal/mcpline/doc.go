// Package mcpline serves an mcp-go MCPServer over newline-delimited
// JSON-RPC (a process's stdin and stdout, or one socket connection): the
// front end of our own servers (the demo server and the test server), which
// mcp-go's StdioServer cannot be (it keeps one session per process).
//
// Concurrency contract: Serve owns the goroutines it starts: one reading
// lines, one per request in flight, one forwarding the session's
// notifications; responses and notifications are written one at a time, a
// handler's notifications before its response. A notifications/cancelled
// for a request in flight cancels its context and drops its response before
// the next line is read. When Serve returns every handler has returned.
package mcpline
