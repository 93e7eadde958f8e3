// Package trace writes metadata-only protocol traces (seed 002's
// per-server "trace": true): one JSON line per message a traced server's
// connection sends or receives, with its direction, kind, method, id, size
// in bytes, timing and end reason, never a payload, argument, result,
// header, URL, command line, environment value or error message.
//
// [Wrap] puts a tracing [messages.Dialer] in front of the runtime's
// connection port; a [Writer] appends the lines to one file per server
// under a directory (docs/tracing.md). Timestamps and durations come from
// the injected clock. Writing never blocks the caller: lines wait in a
// bounded queue for the writer's goroutine, and lines that find it full
// are counted and reported in the next line written.
package trace
