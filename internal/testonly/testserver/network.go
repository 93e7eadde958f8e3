package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// listenLoopback listens on addr, which must name host 127.0.0.1.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host != "127.0.0.1" {
		return nil, fmt.Errorf("listen address %q: the test server binds only 127.0.0.1", addr)
	}
	return net.Listen("tcp", addr)
}

// announce prints the one LISTEN line a launcher waits for.
func announce(where string) error {
	_, err := fmt.Fprintln(os.Stdout, "LISTEN", where)
	return err
}

// serveHTTPUntilStdinEOF serves h on ln until stdin ends or serving fails.
func serveHTTPUntilStdinEOF(ln net.Listener, h http.Handler, url string) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if err := announce(url); err != nil {
		_ = hs.Close()
		return err
	}
	select {
	case err := <-errc:
		return err
	case <-stdinClosed():
		_ = hs.Close()
		return nil
	}
}

// serveStreamable serves Streamable HTTP at /mcp (--http).
func serveStreamable(_ context.Context, cfg config, srv *server.MCPServer) error {
	ln, err := listenLoopback(cfg.httpAddr)
	if err != nil {
		return err
	}
	var h http.Handler = mcpline.StreamableHTTP(server.NewStreamableHTTPServer(srv), cfg.methods)
	if cfg.modernOnly {
		h = refuseInitialize(h)
	}
	if cfg.postStatus != 0 {
		h = answerPostsWith(cfg.postStatus, h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", logHTTP(h))
	return serveHTTPUntilStdinEOF(ln, mux, "http://"+ln.Addr().String()+"/mcp")
}

// serveSSE serves the legacy HTTP+SSE transport only (--sse): GET /mcp opens
// the event stream, POST /message?sessionId=... carries requests, and any
// other method on /mcp is refused with 405 (or with --post-status) so that a
// client trying Streamable HTTP first has to fall back.
func serveSSE(_ context.Context, cfg config, srv *server.MCPServer) error {
	ln, err := listenLoopback(cfg.sseAddr)
	if err != nil {
		return err
	}
	front := mcpline.NewLegacySSE(mcpgoBackend{srv}, "/mcp", "/message", mcpline.Options{Methods: cfg.methods})
	defer front.Close()
	refusal := http.StatusMethodNotAllowed
	if cfg.postStatus != 0 {
		refusal = cfg.postStatus
	}
	h := logHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" && r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "this server speaks only the legacy HTTP+SSE transport", refusal)
			return
		}
		front.ServeHTTP(w, r)
	}))
	return serveHTTPUntilStdinEOF(ln, h, "http://"+ln.Addr().String()+"/mcp")
}

// serveSocket serves each connection on a Unix socket with the stdio line
// loop (--socket). Each connection is its own MCP session.
func serveSocket(ctx context.Context, cfg config, srv *server.MCPServer) error {
	ln, err := net.Listen("unix", cfg.socketPath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var conns sync.WaitGroup
	defer conns.Wait()
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		for n := 1; ; n++ {
			conn, err := ln.Accept()
			if err != nil {
				errc <- err
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer conn.Close()
				var in io.Reader = conn
				var closer *inputCloser
				if cfg.closeInputOn != "" {
					closer = socketCloser(conn, ctx.Done())
					in = closer
				}
				err := mcpline.ServeWith(ctx, mcpgoBackend{srv}, tapWire(in), conn, cfg.lineOptions(fmt.Sprintf("socket-%d", n), closer))
				if err != nil && !errors.Is(err, net.ErrClosed) {
					fmt.Fprintf(os.Stderr, "testserver: socket connection %d: %v\n", n, err)
				}
			}()
		}
	}()
	if err := announce(cfg.socketPath); err != nil {
		_ = ln.Close()
		return err
	}
	select {
	case err := <-errc:
		return err
	case <-stdinClosed():
		_ = ln.Close()
		<-errc
		return nil
	}
}

// answerPostsWith answers every POST with status and an empty body.
func answerPostsWith(status int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
	})
}

// refuseInitialize answers an initialize POST with the --modern-only JSON-RPC
// error (HTTP 200) and passes everything else on.
func refuseInitialize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, mcpline.MaxLine))
		if err != nil {
			http.Error(w, "cannot read request body", http.StatusBadRequest)
			return
		}
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &head) == nil && head.Method == string(mcp.MethodInitialize) {
			b, _ := json.Marshal(mcpline.NewErrorReply(head.ID, mcp.METHOD_NOT_FOUND, ModernOnlyMessage))
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
