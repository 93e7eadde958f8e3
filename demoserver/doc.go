// Package demoserver owns mcprt's built-in demo MCP server: a small,
// self-contained MCP server (echo, add, now, read_file, list_files,
// demo_fault) that the runtime's command line can serve over stdio or
// Streamable HTTP, and that speaks MCP events through internal/eventsrv. It
// knows nothing of the runtime.
//
// # Events
//
// events/list and events/stream; the wire format is eventsrv's:
//   - fs.changed: files created, changed or removed under [Options.Root],
//     found by scanning it every [Options.Poll] (250 ms by default) while
//     the type has streams, without following symbolic links, at most
//     [MaxWatched] files. data {path (relative to the root, with /),
//     change: created|changed|removed, size?}. Arguments {dir?, glob?}: only
//     files under dir (relative to the root), and only those whose name (a
//     glob without /) or whose path under dir (a glob with /) matches, in
//     path.Match syntax. A scan that fails is reported to the streams as
//     notifications/events/error (once, and once more when it works again).
//   - clock.tick: a tick on every whole second while the type has streams;
//     data {time, unix}; arguments {seconds?: N ≥ 1} keep the seconds
//     divisible by N.
//
// Cursors are opaque; retention keeps, per type, the last 1,000
// occurrences no older than 24 h (eventsrv's defaults); heartbeats come
// every 30 s ([Options.Heartbeat]). With [Options.StateDir] the logs, the
// epoch and the last scan of the root are kept there: a restarted server
// (the runtime respawning a stdio server after a disconnect) replays from
// the old cursors, and its first scan reports what changed while it was
// down, so a client that reconnects with its cursor loses nothing and sees
// nothing twice. A cursor older than retention is answered with the
// client's cursor in active and then a second active {truncated: true}.
//
// # Faults
//
// demo_fault {fault, name?, ms?, code?, message?, data?} disturbs the open
// streams (all, or those of event type name): disconnect (stdio: the
// session ends and the server exits; Streamable HTTP: the stream's
// response ends; the tool call itself is answered), stall (no events or
// heartbeats, for ms or until resume), resume, gap (what is pending is
// skipped and a truncated active says so), error (a recoverable
// notifications/events/error) and terminate (notifications/events/
// terminated).
//
// # Files
//
// read_file and list_files are confined to [Options.Root]: read_file refuses
// absolute paths, paths with ".." that leave the root, symlinks that resolve
// outside it (and absolute symlinks), non-regular files, files over
// [MaxFileSize] and non-UTF-8 content, each with a tool error result
// (isError) saying why. Every file access (reads, listings, the fs.changed
// scan, the state directory's files, through internal/eventsrv too) goes
// through an [os.Root], so the kernel resolves each path inside its
// directory: a symlink swapped while a file is being opened cannot lead out
// of it (TestReadFileSymlinkSwapRace swaps a directory for a link to the
// outside 20,000 times over while reading).
//
// # Concurrency
//
// Concurrency contract: the server is safe for concurrent use.
// [ServeStdio] reads and dispatches lines in order on one goroutine,
// handling client notifications (including notifications/cancelled) inline;
// each request runs on a goroutine of its own, one pump goroutine writes
// server notifications, a response is written after the notifications its
// handler sent, and a mutex serialises all writes. A cancelled request's
// context is cancelled, its response is not sent, and the next line is read
// only once its handler has returned. [ServeHTTP] owns its listener and HTTP
// server goroutines; request handlers run on net/http's goroutines and see
// their context cancelled when the client drops the request. An event
// stream runs on its request's goroutine; the file scans and ticks run on
// clock timer callbacks, one at a time, only while their type has streams.
// Both functions block until done and wait for the handlers they started.
package demoserver
