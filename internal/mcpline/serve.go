package mcpline

import (
	"bufio"
	"bytes"
	"context"
	"io"
)

// MaxLine bounds one incoming JSON-RPC line (and one HTTP request body).
const MaxLine = 64 << 20

// Options configure a line connection ([ServeWith]) or a legacy SSE front.
type Options struct {
	// SessionID names the backend session of a line connection
	// ("stdio" when empty); legacy SSE sessions get random ids.
	SessionID string
	// Filter, when set, sees every request first and may answer it.
	Filter Filter
	// Methods are the custom methods served next to the MCP server's own.
	Methods Methods
}

// Serve serves MCP over newline-delimited JSON-RPC; it is ServeWith without
// custom methods.
func Serve(ctx context.Context, b Backend, sessionID string, in io.Reader, out io.Writer, filter Filter) error {
	return ServeWith(ctx, b, in, out, Options{SessionID: sessionID, Filter: filter})
}

// ServeWith serves MCP over newline-delimited JSON-RPC until in ends, ctx
// ends or a write to out fails. Notifications and responses from the peer
// are handled in order on the calling goroutine; each request runs on its
// own goroutine, custom methods on their Handler. A notifications/cancelled
// for an in-flight request cancels its context, drops its response and waits
// for its handler to return before the next line is read. When ServeWith
// returns, every handler it started has returned. The goroutine reading in
// stays blocked in Read until in yields or is closed.
func ServeWith(ctx context.Context, b Backend, in io.Reader, out io.Writer, opts Options) error {
	if opts.SessionID == "" {
		opts.SessionID = "stdio"
	}
	c := newConn(b, func(b []byte) error {
		_, err := out.Write(append(b, '\n'))
		return err
	}, opts)
	if err := c.open(ctx); err != nil {
		return err
	}
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go readLines(in, lines, readErr, c.ctx.Done())

	err := loop(c, lines, readErr)
	if cerr := c.close(); err == nil {
		err = cerr
	}
	return err
}

// readLines sends each line of in on lines, then the scanner's error (nil at
// end of input) on errc, then closes lines.
func readLines(in io.Reader, lines chan<- []byte, errc chan<- error, done <-chan struct{}) {
	defer close(lines)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	for sc.Scan() {
		select {
		case lines <- bytes.Clone(sc.Bytes()):
		case <-done:
			return
		}
	}
	errc <- sc.Err()
}

func loop(c *conn, lines <-chan []byte, readErr <-chan error) error {
	for {
		select {
		case <-c.ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				select {
				case err := <-readErr:
					return err
				default:
					return nil
				}
			}
			c.dispatch(line, nil)
		}
	}
}
