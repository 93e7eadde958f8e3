// Package demoserver owns mcprt's built-in demo MCP server: a small,
// self-contained MCP server (echo, add, now, read_file, list_files) that the
// runtime's command line can serve over stdio or Streamable HTTP. It knows
// nothing of the runtime.
//
// read_file and list_files are confined to [Options.Root]: read_file refuses
// absolute paths, paths with ".." that leave the root, symlinks that resolve
// outside it, non-regular files, files over [MaxFileSize] and non-UTF-8
// content, each with a tool error result (isError) saying why.
//
// Concurrency contract: [NewServer] returns a server safe for concurrent use.
// [ServeStdio] reads and dispatches lines in order on one goroutine,
// handling client notifications (including notifications/cancelled) inline;
// each request runs on a goroutine of its own, one pump goroutine writes
// server notifications, a response is written after the notifications its
// handler sent, and a mutex serialises all writes. A cancelled request's
// context is cancelled, its response is not sent, and the next line is read
// only once its handler has returned. [ServeHTTP] owns its listener and HTTP
// server goroutines; request handlers run on net/http's goroutines and see
// their context cancelled when the client drops the request. Both functions
// block until done and wait for the handlers they started.
package demoserver
