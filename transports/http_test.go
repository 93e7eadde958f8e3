package transports

import (
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// TestHTTPHeaders: headers configured on the endpoint reach the server on
// every request of a Streamable HTTP connection.
func TestHTTPHeaders(t *testing.T) {
	t.Parallel()
	ep := httpEP(t, "--http 127.0.0.1:0")
	ep.Headers = map[string]string{"X-Mcprt-Test": "header value 1", "Authorization": "Bearer tok-123"}
	c, info := dial(t, ep)
	if info.Transport != messages.TransportHTTP || info.ProtocolVersion != messages.Protocol20251125 || info.Name != "testserver" {
		t.Errorf("info = %+v", info)
	}
	for name, want := range map[string]string{"X-Mcprt-Test": "header value 1", "Authorization": "Bearer tok-123", "X-Not-Configured": "<unset>"} {
		if got := toolText(t, callTool(t, c, "header", map[string]any{"name": name})); got != want {
			t.Errorf("header %s reached the server as %q, want %q", name, got, want)
		}
	}
	echo(t, c, "over streamable http")
	if cc := c.close(); cc.Err != nil {
		t.Errorf("ConnClosed.Err = %v after Close", cc.Err)
	}
}

// TestSSEFallback: an endpoint that refuses POST with 405 or 406 is spoken
// to over legacy HTTP+SSE, headers included.
func TestSSEFallback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, args string }{
		{"405", "--sse 127.0.0.1:0"},
		{"406", "--sse 127.0.0.1:0 --post-status 406"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ep := httpEP(t, tc.args)
			ep.Headers = map[string]string{"X-Mcprt-Test": "sse header"}
			c, info := dial(t, ep)
			if info.Transport != messages.TransportSSE || info.ProtocolVersion != messages.Protocol20251125 {
				t.Errorf("info = %+v; want legacy SSE on 2025-11-25", info)
			}
			echo(t, c, "over sse")
			if got := toolText(t, callTool(t, c, "add", map[string]any{"a": 2, "b": 3})); got != "5" {
				t.Errorf("add = %q", got)
			}
			if got := toolText(t, callTool(t, c, "header", map[string]any{"name": "X-Mcprt-Test"})); got != "sse header" {
				t.Errorf("header over SSE = %q", got)
			}
			if cc := c.close(); cc.Err != nil {
				t.Errorf("ConnClosed.Err = %v after Close", cc.Err)
			}
		})
	}
}

// TestSSENoResponseCeiling: mcp-go's SSE transport gives up on a response
// after 60 s by default; ours waits as long as the caller does.
func TestSSENoResponseCeiling(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("takes 61 s")
	}
	c, _ := dial(t, httpEP(t, "--sse 127.0.0.1:0"))
	c.ctx = ctxFor(t, 3*time.Minute)
	if got := toolText(t, callTool(t, c, "slow", map[string]any{"ms": 61000})); got != "slept 61000" {
		t.Errorf("slow = %q", got)
	}
}

// TestHTTPStatusInErrors: an endpoint that answers every POST with 500 fails
// the dial with a message naming the status.
func TestHTTPStatusInErrors(t *testing.T) {
	t.Parallel()
	e := dialErr(t, httpEP(t, "--http 127.0.0.1:0 --post-status 500"))
	wantErr(t, "POST 500", e, messages.KindInitFailed, "HTTP 500")
}

// TestHTTPServerGone: when a Streamable HTTP server goes away, a call fails
// as disconnected and the connection closes so that the runtime reconnects.
func TestHTTPServerGone(t *testing.T) {
	t.Parallel()
	url, proc := startTestServer(t, "--http 127.0.0.1:0")
	c, _ := dial(t, messages.Endpoint{URL: url})
	echo(t, c, "before")
	killProc(t, proc)
	res := callTool(t, c, "echo", map[string]any{"message": "after"})
	wantErr(t, "call after the server died", res.Err, messages.KindDisconnected)
	cc := c.waitClosed()
	wantErr(t, "ConnClosed", cc.Err, messages.KindDisconnected)
}
