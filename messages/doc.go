// Package messages is the typed contract of the runtime: every value that
// crosses an actor boundary, the connection port between actors and MCP I/O,
// and the errors callers see.
//
// It is plain data. It imports nothing but the standard library, holds no
// goroutines, locks or clocks, and its only behaviour is validation, String
// methods and small constructors. Everyone else reads it, so every exported
// identifier says what it means and who produces and consumes it.
//
// Concurrency contract: values are immutable once sent. A producer that sends
// a message (to an actor, through a [Sink], or to a Reply function) must not
// modify it or anything it references afterwards; json.RawMessage fields in
// particular are owned by the receiver from then on. Reply functions carried
// in commands are called exactly once, must not block, and may be called from
// any goroutine.
//
// Secrets: [Endpoint] carries credentials (environment values, headers). Its
// String, GoString and LogValue methods redact them, so an Endpoint printed
// by accident names fields, never values.
package messages
