package transports

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

const (
	mib      = 1 << 20
	overSize = 17 * mib // the big tool's text alone is over MaxFrame
	underMax = 15 * mib // the whole message stays under MaxFrame
)

// TestFrameLimits: every transport takes a 15 MiB answer and refuses one
// over 16 MiB as a protocol error. On stdio, sockets and legacy SSE the
// stream cannot be resynchronised, so the connection closes with that error;
// on Streamable HTTP only the one exchange fails.
func TestFrameLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		open       func(t *testing.T) messages.Endpoint
		closesConn bool
	}{
		{"stdio", func(t *testing.T) messages.Endpoint { return stdioEP(t, "") }, true},
		{"socket", func(t *testing.T) messages.Endpoint { return socketEP(t, "") }, true},
		{"http", func(t *testing.T) messages.Endpoint { return httpEP(t, "--http 127.0.0.1:0") }, false},
		{"sse", func(t *testing.T) messages.Endpoint { return httpEP(t, "--sse 127.0.0.1:0") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := dial(t, tc.open(t))
			if got := toolText(t, callTool(t, c, "big", map[string]any{"bytes": underMax})); len(got) != underMax || strings.Trim(got, "x") != "" {
				t.Fatalf("15 MiB answer came back as %d bytes", len(got))
			}
			res := callTool(t, c, "big", map[string]any{"bytes": overSize})
			if res.Result != nil {
				t.Fatalf("a 17 MiB answer was accepted (%d bytes)", len(res.Result))
			}
			wantErr(t, "17 MiB answer", res.Err, messages.KindProtocol, "16 MiB")
			if !tc.closesConn {
				echo(t, c, "still connected")
				return
			}
			cc := c.waitClosed()
			wantErr(t, "ConnClosed", cc.Err, messages.KindProtocol, "16 MiB")
		})
	}
}

// TestLargeRequests: a request much larger than a pipe's or socket's
// buffer goes out whole (the first part without blocking, the rest from a
// worker), interleaved with small requests that must not corrupt it.
func TestLargeRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ep   func(t *testing.T) messages.Endpoint
	}{
		{"stdio", func(t *testing.T) messages.Endpoint { return stdioEP(t, "") }},
		{"socket", func(t *testing.T) messages.Endpoint { return socketEP(t, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := dial(t, tc.ep(t))
			msg := strings.Repeat("L", 2<<20)
			big := c.send("tools/call", toolParams("echo", map[string]any{"message": msg}))
			var small []messages.OpID
			for i := 0; i < 20; i++ {
				small = append(small, c.send("tools/call", toolParams("echo", map[string]any{"message": fmt.Sprint(i)})))
			}
			if got := toolText(t, c.result(big)); got != "echo: "+msg {
				t.Fatalf("large request came back as %d bytes", len(got))
			}
			for i, id := range small {
				if got := toolText(t, c.result(id)); got != fmt.Sprintf("echo: %d", i) {
					t.Fatalf("small request %d = %q", i, got)
				}
			}
		})
	}
}
