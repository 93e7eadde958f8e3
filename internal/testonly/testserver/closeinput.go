package testserver

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// inputCloser implements --close-input-on: the server stops reading its
// input (stdio: it closes its stdin, the pipe's only read end; a socket:
// shutdown(SHUT_RD)) when a request of the chosen method arrives, before
// answering it, and keeps its output open. The runtime's next write then
// fails (EPIPE) while its reader sees no end of file: the case where a
// server stops listening but keeps talking.
type inputCloser struct {
	r      io.Reader
	close  func()
	once   sync.Once
	closed atomic.Bool
	stop   <-chan struct{} // ends the wait of a Read after the input closed
}

// Read reads the input until it is closed; after that it blocks (until
// stop), so the serving loop neither sees an end of input nor stops
// answering.
func (c *inputCloser) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && c.closed.Load() {
		<-c.stop
	}
	return n, err
}

// shut closes the input once.
func (c *inputCloser) shut() {
	c.once.Do(func() {
		c.closed.Store(true)
		c.close()
	})
}

// socketCloser wraps a socket connection whose input --close-input-on
// shuts; a Read after that waits until stop (the server's shutdown).
func socketCloser(c net.Conn, stop <-chan struct{}) *inputCloser {
	ic := &inputCloser{r: c, stop: stop}
	ic.close = func() {
		if uc, ok := c.(*net.UnixConn); ok {
			_ = uc.CloseRead()
		}
	}
	return ic
}
