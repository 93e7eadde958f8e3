package e2e

import (
	"strings"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
)

// A configured server the configuration dropped is visible to the model:
// in status with a safe one-line reason, and by name (skipped, and why,
// versus unknown); with every server dropped, status says no valid servers
// remain.
func TestSkippedServersVisible(t *testing.T) {
	ctx := testCtx(t)
	f := &config.File{MCPServers: map[string]config.Server{
		"good": selfServer(t, ""),
		"bad":  {Command: "x", Lifecycle: "sometimes", Env: map[string]string{"TOKEN": "s3cret-value"}},
		"off":  {Command: "x", Disabled: true},
	}}
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: f})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	res := mcp.Execute(ctx, []byte(`{}`))
	if !strings.Contains(res.Text, "⊘ off (disabled)") || !strings.Contains(res.Text, "⊘ bad (skipped: field lifecycle: ") {
		t.Fatalf("status:\n%s", res.Text)
	}
	res = mcp.Execute(ctx, []byte(`{"server":"bad"}`))
	wantError(t, res, "server_not_found", "")
	if !strings.Contains(res.Text, `server "bad" is configured but was skipped: field lifecycle: `) {
		t.Fatalf("skipped server by name: %q", res.Text)
	}
	res = mcp.Execute(ctx, []byte(`{"server":"typo"}`))
	if !strings.Contains(res.Text, `no server named "typo" is configured (servers: `) {
		t.Fatalf("unknown server: %q", res.Text)
	}
	if d := mcp.Description; !strings.Contains(d, "- bad (skipped: ") {
		t.Fatalf("the tool's description does not name the skipped server:\n%s", d)
	}
	for _, text := range []string{res.Text, mcp.Description, mcp.Execute(ctx, []byte(`{}`)).Text} {
		if strings.Contains(text, "s3cret") {
			t.Fatalf("a secret reached the model: %s", text)
		}
	}

	rt2, err := mcprt.Start(ctx, mcprt.Options{Config: &config.File{MCPServers: map[string]config.Server{"bad": f.MCPServers["bad"]}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	mcp2, _ := rt2.Tool(mcprt.MCPToolName)
	res = mcp2.Execute(ctx, []byte(`{}`))
	if !strings.HasPrefix(res.Text, "MCP: no valid servers remain (1 configured server was skipped)\n⊘ bad (skipped: ") {
		t.Fatalf("all dropped: %q", res.Text)
	}
}
