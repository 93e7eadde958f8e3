package transports

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
)

// TestEverything talks to the reference server, server-everything, over
// each of its transports: handshake, tools/list and tools/call echo.
func TestEverything(t *testing.T) {
	t.Parallel()
	js := testenv.EverythingJS(t)
	for _, tc := range []struct {
		name string
		ep   func(t *testing.T) messages.Endpoint
		want messages.TransportKind
	}{
		{"stdio", func(t *testing.T) messages.Endpoint {
			return messages.Endpoint{Command: testenv.Node(t), Args: []string{js, "stdio"}}
		}, messages.TransportStdio},
		// POST /sse answers 404 there: the dial falls back to legacy SSE.
		{"sse", func(t *testing.T) messages.Endpoint {
			return messages.Endpoint{URL: testenv.StartEverything(t, "sse") + "/sse"}
		}, messages.TransportSSE},
		{"streamableHttp", func(t *testing.T) messages.Endpoint {
			return messages.Endpoint{URL: testenv.StartEverything(t, "streamableHttp") + "/mcp", Headers: map[string]string{"X-Mcprt-Test": "1"}}
		}, messages.TransportHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, info := dial(t, tc.ep(t))
			if info.Transport != tc.want || info.ProtocolVersion != messages.Protocol20251125 || info.Name == "" {
				t.Errorf("info = %+v", info)
			}
			res := call(t, c, "tools/list", nil)
			if res.Err != nil {
				t.Fatalf("tools/list: %v", res.Err)
			}
			var list struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(res.Result, &list); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "echo") || !slices.Contains(names, "get-sum") {
				t.Errorf("tools = %v", names)
			}
			if got := toolText(t, callTool(t, c, "echo", map[string]any{"message": "hi"})); got != "Echo: hi" {
				t.Errorf("echo = %q", got)
			}
			if cc := c.close(); cc.Err != nil {
				t.Errorf("ConnClosed.Err = %v after Close", cc.Err)
			}
		})
	}
}
