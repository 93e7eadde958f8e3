package demoserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// ServeStdio serves the demo server over newline-delimited JSON-RPC: it
// reads requests from in and writes responses and notifications to out, one
// JSON message per line. It returns nil when in reaches end of file or ctx
// ends, and the error when reading in or writing out fails. In-flight
// requests are cancelled on return and their handlers have finished by then.
// The goroutine reading in stays blocked in in.Read until in yields or is
// closed; close in to release it.
func ServeStdio(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	d, err := newDemo(opts)
	if err != nil {
		return fmt.Errorf("demoserver: %w", err)
	}
	defer d.close()
	return mcpline.ServeWith(ctx, d.mcp, in, out, mcpline.Options{SessionID: "stdio", Methods: d.events.Methods()})
}

// ServeHTTP serves the demo server as Streamable HTTP at http://addr/mcp.
// addr must be on 127.0.0.1 (port 0 picks a free port). Once listening it
// calls ready, on the calling goroutine, with the endpoint URL. It returns
// nil when ctx ends, after closing every connection and waiting for the
// request handlers to return, or the error that stopped it.
func ServeHTTP(ctx context.Context, addr string, opts Options, ready func(url string)) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("demoserver: listen address %q: %w", addr, err)
	}
	if host != "127.0.0.1" {
		return fmt.Errorf("demoserver: listen address %q: only 127.0.0.1 is allowed", addr)
	}
	d, err := newDemo(opts)
	if err != nil {
		return fmt.Errorf("demoserver: %w", err)
	}
	defer d.close()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("demoserver: %w", err)
	}

	handlers := newTracker()
	backend := mcpline.NewStreamableServer(d.mcp)
	defer backend.Close()
	mcpHandler := mcpline.StreamableHTTP(backend, d.events.Methods())
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !handlers.enter() {
			http.Error(w, "server is shutting down", http.StatusServiceUnavailable)
			return
		}
		defer handlers.leave()
		mcpHandler.ServeHTTP(w, r)
	}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if ready != nil {
		ready("http://" + ln.Addr().String() + "/mcp")
	}

	select {
	case err = <-errc:
	case <-ctx.Done():
		_ = hs.Close()
		err = <-errc
	}
	_ = hs.Close()
	handlers.closeAndWait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("demoserver: %w", err)
}

// tracker counts running handlers and refuses new ones once closed, so that
// ServeHTTP can wait for every handler it let in.
type tracker struct {
	mu     sync.Mutex
	idle   *sync.Cond
	active int  // guarded by mu
	closed bool // guarded by mu
}

func newTracker() *tracker {
	t := &tracker{}
	t.idle = sync.NewCond(&t.mu)
	return t
}

func (t *tracker) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.active++
	return true
}

func (t *tracker) leave() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active--
	if t.active == 0 {
		t.idle.Broadcast()
	}
}

func (t *tracker) closeAndWait() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for t.active > 0 {
		t.idle.Wait()
	}
}
