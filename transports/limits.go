package transports

import (
	"errors"
	"time"
)

// MaxFrame is the largest message accepted from a server: one stdio or
// socket line, one HTTP JSON body, or one SSE event. Larger input is refused
// as soon as it crosses the limit, without buffering the rest.
const MaxFrame = 16 << 20

// sseFraming is the allowance for SSE field names and line breaks on top of
// MaxFrame for one event.
const sseFraming = 64 << 10

// ErrFrameTooLarge reports a message over MaxFrame.
var ErrFrameTooLarge = errors.New("transports: message over 16 MiB")

// ErrNotJSON reports a stdio or socket line that is not a JSON-RPC message.
var ErrNotJSON = errors.New("transports: server wrote a line that is not JSON-RPC")

// ErrClosed reports use of a connection after it closed.
var ErrClosed = errors.New("transports: connection closed")

// Grace periods for terminating a stdio server: after stdin closes it has
// stdinGrace to exit by itself, then its process group gets SIGTERM and
// termGrace, then SIGKILL.
const (
	stdinGrace = 2 * time.Second
	termGrace  = 2 * time.Second
)

// stderrKeep is how much of a stdio server's stderr is kept.
const stderrKeep = 64 << 10

// maxIdlePerHost is how many idle keep-alive connections an HTTP server's
// transport keeps.
const maxIdlePerHost = 64
