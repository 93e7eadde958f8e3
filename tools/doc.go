// Package tools builds the agent-facing tools: their names, descriptions,
// JSON input schemas, argument parsing and the text a model reads back.
// The `mcp` proxy tool (status, list, search, describe, instructions,
// connect, call) and the direct tools share one view of the catalog per
// catalog version (the exposed tools after includeTools/excludeTools, with
// resource tools, name indexes and a search index built on first use) and
// one result pipeline (output-schema validation, the output guard that cuts
// long text and saves full results to private files). See docs/proxy.md.
//
// Concurrency contract: a Tool's Execute may be called from many goroutines
// at once. It blocks its caller until the answer arrives or the caller's
// context ends, talking to the actors only through actors.System (typed
// messages with reply functions); it never blocks an actor and starts no
// goroutines of its own; a member of a shared runtime's cluster also hands
// it a Peers (peers.go), which it calls on the caller's goroutine for the
// other members' servers and to call their tools. Views are immutable and
// swapped atomically; the status and catalog reads never connect anything. A cache view
// (NewCachedMCP) reads the configuration and the disk cache instead of an
// actor system, and answers only the modes that connect nothing.
package tools
