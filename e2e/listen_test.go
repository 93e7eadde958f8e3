package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// A 2026-07-28 server sends tools/list_changed only on a
// subscriptions/listen request that asked for it (the revision has no GET
// stream, and the TypeScript SDK v2 drops change notifications nobody
// listens for). The runtime opens one after the handshake, so a tool the
// server adds reaches the catalog without anyone listing again: over
// Streamable HTTP (the handler's notifier publishes on the listen stream)
// and stdio (the live server's own list_changed, stamped for the listen).
func TestListenForListChangesWithTSPeer(t *testing.T) {
	url, _ := testenv.StartTSPeer(t, "modern-http")
	node, args := testenv.TSPeerStdio(t, "modern-stdio")
	servers := map[string]config.Server{
		"http":  {URL: url},
		"stdio": {Command: node, Args: args, ProtocolVersion: "2026-07-28"},
	}
	for name, srv := range servers {
		t.Run(name, func(t *testing.T) {
			ctx := testkit.Ctx(t)
			rt, err := mcprt.Start(ctx, mcprt.Options{
				Config: &config.File{MCPServers: map[string]config.Server{"peer": srv}}, AgentDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			mcp, _ := rt.Tool(mcprt.MCPToolName)
			has := func(tool string) bool { return catalogHas(rt, "peer", tool) }
			res := mcp.Execute(ctx, json.RawMessage(`{"server":"peer","tool":"echo","args":{}}`))
			if res.IsError {
				t.Fatalf("echo: %s", res.Text)
			}
			testkit.Poll(ctx, t, "the catalog lists echo", func() bool { return has("echo") })
			if has("added") {
				t.Fatal("the tool is listed before the server added it")
			}
			res = mcp.Execute(ctx, json.RawMessage(`{"server":"peer","tool":"add_tool","args":{}}`))
			if res.IsError || !strings.Contains(res.Text, "tool added") {
				t.Fatalf("add_tool: %s", res.Text)
			}
			testkit.Poll(ctx, t, "the catalog lists the added tool", func() bool { return has("added") })
			res = mcp.Execute(ctx, json.RawMessage(`{"server":"peer","tool":"added","args":{}}`))
			if res.IsError || !strings.Contains(res.Text, "added answered") {
				t.Fatalf("added: %s", res.Text)
			}
		})
	}
}

// A listen stream the server cuts is opened again (after listenRetry on
// the real clock), and list changes flow on the new one.
func TestListenReopensAfterACutWithTSPeer(t *testing.T) {
	url, _ := testenv.StartTSPeer(t, "modern-http")
	ctx := testkit.Ctx(t)
	rt, err := mcprt.Start(ctx, mcprt.Options{
		Config: &config.File{MCPServers: map[string]config.Server{"peer": {URL: url}}}, AgentDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	call := func(tool string) string {
		t.Helper()
		res := mcp.Execute(ctx, json.RawMessage(`{"server":"peer","tool":"`+tool+`","args":{}}`))
		if res.IsError {
			t.Fatalf("%s: %s", tool, res.Text)
		}
		return res.Text
	}
	if got := call("listens"); !strings.Contains(got, "listens 1") {
		t.Fatalf("after the handshake: %s", got)
	}
	if got := call("cut_listen"); !strings.Contains(got, "cut 1") {
		t.Fatalf("cut_listen: %s", got)
	}
	testkit.Poll(ctx, t, "a second listen request", func() bool { return strings.Contains(call("listens"), "listens 2") })
	call("add_tool")
	testkit.Poll(ctx, t, "the catalog lists the added tool", func() bool { return catalogHas(rt, "peer", "added") })
}

// catalogHas says whether server's catalog lists tool.
func catalogHas(rt *mcprt.Runtime, server, tool string) bool {
	tools, _ := rt.ServerTools(server)
	for _, tl := range tools {
		if tl.Name == tool {
			return true
		}
	}
	return false
}
