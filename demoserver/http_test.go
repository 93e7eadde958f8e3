package demoserver

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// startHTTP runs ServeHTTP until the test ends and returns its URL.
func startHTTP(t *testing.T, opts Options) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- ServeHTTP(ctx, "127.0.0.1:0", opts, func(url string) { urls <- url }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	select {
	case url := <-urls:
		return url
	case err := <-done:
		t.Fatalf("ServeHTTP: %v", err)
		return ""
	}
}

func TestHTTP(t *testing.T) {
	for _, version := range []string{mcp.ProtocolVersion20260728, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			ctx := testCtx(t)
			url := startHTTP(t, Options{Root: simpleRoot(t)})
			if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
				t.Fatalf("url %q", url)
			}
			tr, err := transport.NewStreamableHTTP(url)
			if err != nil {
				t.Fatal(err)
			}
			c := client.NewClient(tr, client.WithProtocolVersion(version))
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			exercise(t, ctx, c)
		})
	}
}

// TestHTTPStopsWithOpenStream checks that ServeHTTP returns when its context
// ends even while a client holds a long-lived GET stream open.
func TestHTTPStopsWithOpenStream(t *testing.T) {
	ctx := testCtx(t)
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- ServeHTTP(serveCtx, "127.0.0.1:0", Options{Root: simpleRoot(t)}, func(url string) { urls <- url })
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("ServeHTTP: %v", err)
	}
	tr, err := transport.NewStreamableHTTP(url, transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	initialize(t, ctx, c)
	callOK(t, ctx, c, "echo", map[string]any{"message": "x"})

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeHTTP = %v, want nil", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeHTTP did not return after its context ended")
	}
}

func TestHTTPRejectsNonLoopbackAddresses(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "localhost:0", ":0", "[::1]:0", "127.0.0.1"} {
		err := ServeHTTP(context.Background(), addr, Options{}, func(string) { t.Errorf("%s: ready called", addr) })
		if err == nil {
			t.Errorf("ServeHTTP(%q) succeeded", addr)
		}
	}
}
