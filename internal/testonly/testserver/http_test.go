package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func newHTTPClient(t *testing.T, ctx context.Context, url string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func post(t *testing.T, ctx context.Context, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestHTTPEcho(t *testing.T) {
	ctx := testCtx(t)
	url := listenURL(t, ctx, startProc(t, "--http 127.0.0.1:0"))
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("url %q", url)
	}
	for _, version := range []string{mcp.ProtocolVersion20260728, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		c := newHTTPClient(t, ctx, url, client.WithProtocolVersion(version))
		initialize(t, ctx, c)
		if got := callText(t, ctx, c, "echo", map[string]any{"message": version}); got != "echo: "+version {
			t.Errorf("%s: echo = %q", version, got)
		}
	}
}

func TestHTTPModernOnly(t *testing.T) {
	ctx := testCtx(t)
	url := listenURL(t, ctx, startProc(t, "--http 127.0.0.1:0 --modern-only"))
	status, body := post(t, ctx, url, fmt.Sprintf(legacyInitialize, 9))
	var r rpcReply
	if err := json.Unmarshal([]byte(body), &r); err != nil || status != http.StatusOK {
		t.Fatalf("initialize: status %d body %q", status, body)
	}
	if string(r.ID) != "9" || r.Error == nil || r.Error.Code != mcp.METHOD_NOT_FOUND || r.Error.Message != ModernOnlyMessage {
		t.Fatalf("initialize reply %q", body)
	}
	c := newHTTPClient(t, ctx, url, client.WithProtocolVersion(mcp.ProtocolVersion20260728))
	initialize(t, ctx, c)
	if got := callText(t, ctx, c, "add", map[string]any{"a": 2, "b": 3}); got != "5" {
		t.Errorf("add = %q", got)
	}
}

func TestHTTPPostStatus(t *testing.T) {
	ctx := testCtx(t)
	url := listenURL(t, ctx, startProc(t, "--http 127.0.0.1:0 --post-status 500"))
	status, body := post(t, ctx, url, fmt.Sprintf(legacyInitialize, 1))
	if status != http.StatusInternalServerError || body != "" {
		t.Fatalf("status %d body %q", status, body)
	}
}

func TestSSE(t *testing.T) {
	ctx := testCtx(t)
	url := listenURL(t, ctx, startProc(t, "--sse 127.0.0.1:0"))
	status, _ := post(t, ctx, url, fmt.Sprintf(legacyInitialize, 1))
	if status != http.StatusMethodNotAllowed {
		t.Fatalf("POST /mcp: status %d, want 405", status)
	}
	c, err := client.NewSSEMCPClient(url)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	initialize(t, ctx, c)
	if got := callText(t, ctx, c, "echo", map[string]any{"message": "sse"}); got != "echo: sse" {
		t.Errorf("echo = %q", got)
	}
}

// TestHTTPCancelHang checks that dropping the HTTP request cancels the
// handler. Detection on the server is asynchronous (the connection closing),
// so the test polls the log between echo round trips.
func TestHTTPCancelHang(t *testing.T) {
	ctx := testCtx(t)
	cancelLog := filepath.Join(t.TempDir(), "cancel.log")
	url := listenURL(t, ctx, startProc(t, "--http 127.0.0.1:0", EnvCancelLog+"="+cancelLog))
	c := newHTTPClient(t, ctx, url)
	started := make(chan struct{}, 1)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	})
	initialize(t, ctx, c)

	hangCtx, cancelHang := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(hangCtx, mcp.CallToolRequest{Params: mcp.CallToolParams{
			Name: "hang", Meta: &mcp.Meta{ProgressToken: "hang-http"},
		}})
		errc <- err
	}()
	waitFor(t, ctx, started, "hang to start")
	cancelHang()
	if err := <-errc; err == nil {
		t.Fatal("hang returned without error")
	}
	for {
		callText(t, ctx, c, "echo", map[string]any{"message": "poll"})
		if data, _ := os.ReadFile(cancelLog); string(data) == "cancelled\n" {
			return
		}
		if ctx.Err() != nil {
			t.Fatal("hang was never cancelled")
		}
	}
}
