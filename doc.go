// Package mcprt is an embeddable runtime that connects AI agent hosts to
// MCP servers.
//
// An agent host calls [Start] with [Options], registers the agent-facing
// tools from [Runtime.Tools] with its model loop, and calls [Runtime.Close]
// when it is done. Behind that API every configured server is a supervised
// actor that owns one connection (stdio, Streamable HTTP with legacy SSE
// fallback, or a Unix socket), its lifecycle and its in-flight calls.
//
// Concurrency contract: every method of [Runtime] is safe for concurrent
// use. Tool Execute functions block their caller's goroutine until the
// answer arrives or the caller's context ends; they never block an actor.
// The runtime owns the goroutines it starts and Close waits for all of them.
// Host callbacks ([Host.Deliver], [Host.Notify]) are called one at a time,
// never concurrently with each other.
package mcprt
