package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/mcpline"
	"github.com/mcprt/mcprt/internal/mcpserve"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// envGrow, when set, turns the test binary into a server on our own core
// (internal/mcpserve) that declares tools.listChanged: "stdio" serves it
// on stdin and stdout; "http" serves Streamable HTTP on 127.0.0.1,
// printing "LISTEN <url>" and serving until stdin ends. Its tool add_tool
// adds the tool "added".
const envGrow = "MCPRT_TEST_GROW_SERVER"

func init() {
	mode := os.Getenv(envGrow)
	if mode == "" {
		return
	}
	srv := mcpserve.New(mcpserve.Options{Name: "grow", Version: "1", ToolsListChanged: true})
	answer := func(text string) mcpserve.ToolHandler {
		return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(text), nil
		}
	}
	srv.AddTool(mcp.NewTool("echo"), answer("echo"))
	srv.AddTool(mcp.NewTool("add_tool"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv.AddTool(mcp.NewTool("added"), answer("added answered"))
		return mcp.NewToolResultText("tool added"), nil
	})
	if mode == "stdio" {
		if err := mcpline.ServeWith(context.Background(), srv, os.Stdin, os.Stdout, mcpline.Options{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	backend := mcpline.NewStreamableServer(srv)
	hs := &http.Server{Handler: backend}
	go func() { _ = hs.Serve(ln) }()
	fmt.Println("LISTEN http://" + ln.Addr().String() + "/mcp")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = hs.Close()
	backend.Close()
	os.Exit(0)
}

// A tool our own server core adds reaches the runtime's catalog without
// anyone listing again, on every transport and protocol revision: a
// 2025-11-25 session gets tools/list_changed unasked (over HTTP on its GET
// stream), a 2026-07-28 client on the subscriptions/listen request the
// runtime opens after the handshake.
func TestOwnServerCoreListChanges(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		for _, pv := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+"/"+pv, func(t *testing.T) {
				t.Parallel()
				srv := config.Server{Command: testenv.Self(t), Env: map[string]string{envGrow: "stdio"}, ProtocolVersion: pv}
				if transport == "http" {
					url, _ := testenv.StartSelf(t, map[string]string{envGrow: "http"}) // a server of its own: the test adds a tool
					srv = config.Server{URL: url, ProtocolVersion: pv}
				}
				ctx := testkit.Ctx(t)
				rt, err := mcprt.Start(ctx, mcprt.Options{
					Config: &config.File{MCPServers: map[string]config.Server{"grow": srv}}, AgentDir: t.TempDir(),
				})
				if err != nil {
					t.Fatal(err)
				}
				defer rt.Close()
				tool, _ := rt.Tool(mcprt.MCPToolName)
				call := func(name string) string {
					t.Helper()
					res := tool.Execute(ctx, json.RawMessage(`{"server":"grow","tool":"`+name+`","args":{}}`))
					if res.IsError {
						t.Fatalf("%s: %s", name, res.Text)
					}
					return res.Text
				}
				has := func(name string) bool {
					tools, _ := rt.ServerTools("grow")
					for _, tl := range tools {
						if tl.Name == name {
							return true
						}
					}
					return false
				}
				call("echo")
				testkit.Poll(ctx, t, "the catalog lists echo", func() bool { return has("echo") })
				if has("added") {
					t.Fatal("listed before the server added it")
				}
				if got := call("add_tool"); !strings.Contains(got, "tool added") {
					t.Fatalf("add_tool: %s", got)
				}
				testkit.Poll(ctx, t, "the catalog lists the added tool", func() bool { return has("added") })
				if got := call("added"); !strings.Contains(got, "added answered") {
					t.Fatalf("added: %s", got)
				}
			})
		}
	}
}
