// Package mcprt is an embeddable runtime that connects AI agent hosts to
// MCP servers.
//
// Behind its API every configured server is a supervised actor that owns
// one connection (stdio, Streamable HTTP with legacy SSE fallback, or a
// Unix socket), its lifecycle and its in-flight calls. A host imports this
// package only: host callbacks, the messages it receives, errors and
// status are all here.
//
// # Starting and stopping
//
// Call [Start] with [Options] (the zero value reads the user's and the
// project's configuration files; [Options.Config] gives an isolated
// in-memory configuration instead) and [Runtime.Close] when done: Close
// closes every connection, reaps every server process and waits for every
// goroutine the runtime started. Servers start lazily, on first use,
// unless configured eager or keep-alive.
//
// # Tools for the model
//
// [Runtime.Tools] returns the agent-facing tools to register with the
// model loop: the proxy tool `mcp` (search, describe, call, read a
// resource, ...), the events tool `mcp_events`, and direct tools when the
// configuration asks for them. Each [Tool] has a name, a description, a
// JSON Schema and an Execute function that returns a [Result] for the
// model. [Runtime.WatchTools] signals when the set changed.
//
// # Driving servers from Go
//
// For hosts that use servers themselves, beside the model:
// [Runtime.Servers] and [Runtime.Status] (or [Runtime.WatchStatus]);
// a server's catalog, typed and with its _meta, without connecting:
// [Runtime.ServerTools], [Runtime.ServerResources],
// [Runtime.ServerTemplates], [Runtime.ServerPrompts] ([Runtime.Connect]
// lists it afresh); [Runtime.CallTool] with typed content;
// [Runtime.ReadResource], [Runtime.ReadTemplate] and [Runtime.GetPrompt];
// and [Runtime.Subscribe] to a server's events with a typed
// [EventHandler]. They have the deadlines, leases and limits the tools
// have. A failure is an [*Error] whose kind errors.Is tests
// ([ErrToolNotFound], [ErrServerNotFound], [ErrTimeout], ...).
//
// # Host callbacks
//
// [Options.Host] receives events wakeups for the conversation
// ([Host.Deliver], a [HostMessage] that may start a model turn) and
// notices for the user ([Host.Notify], a [Notice], never for the model).
// [Options.Client] answers what servers ask of the client: elicitation
// forms and URLs, sampling, roots, progress ([ClientHooks]).
//
// # Concurrency
//
// Every method of [Runtime] is safe for concurrent use. Tool Execute
// functions and the typed calls block their caller's goroutine until the
// answer arrives or the caller's context ends; they never block an actor.
// Host callbacks ([Host.Deliver], [Host.Notify]) are called one at a time,
// never concurrently with each other, and must return promptly, as must
// an [EventHandler].
//
// # More
//
// Protocol extensions (custom methods and streams on a server's
// connection): [Runtime.RegisterProtocol]. Protocol tracing (seed 002's
// "trace": true): metadata-only JSON lines under the agent directory
// (docs/tracing.md). A host in another language drives the same API
// through `runtime session` (docs/sidecar.md). Simulation and tests replace
// the clock, the random source, the dispatcher and the connection port
// through [Options.Sim] (package simseam); a host leaves it nil.
package mcprt
