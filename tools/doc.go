// Package tools builds the agent-facing tools: their names, descriptions,
// JSON input schemas, argument parsing and the text a model reads back. The
// first is the `mcp` proxy tool (status, list a server, call a tool).
//
// Concurrency contract: a Tool's Execute may be called from many goroutines
// at once. It blocks its caller until the answer arrives or the caller's
// context ends, talking to the actors only through actors.System (typed
// messages with reply functions); it never blocks an actor and starts no
// goroutines of its own.
package tools
