package mcprt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/demoserver"
)

// The examples use mcprt's demo MCP server in its own process: this test
// binary, re-executed with MCPRT_EXAMPLE_DEMO=1, serves it over stdio.
func TestMain(m *testing.M) {
	if os.Getenv("MCPRT_EXAMPLE_DEMO") == "1" {
		opts := demoserver.Options{Root: os.Getenv("MCPRT_EXAMPLE_ROOT"), Name: "mcprt-demo", Version: mcprt.Version}
		if err := demoserver.ServeStdio(context.Background(), os.Stdin, os.Stdout, opts); err != nil {
			log.Fatal(err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// demoConfig is a configuration with one server, "demo", the demo server
// in its own process. A host would read its users' configuration files
// instead (Options{} does).
func demoConfig() *config.File {
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	root, err := os.MkdirTemp("", "mcprt-example-")
	if err != nil {
		log.Fatal(err)
	}
	return &config.File{MCPServers: map[string]config.Server{
		"demo": {Command: self, Env: map[string]string{"MCPRT_EXAMPLE_DEMO": "1", "MCPRT_EXAMPLE_ROOT": root}},
	}}
}

// scratchDir is a fresh directory for the runtime's own files (its
// metadata cache); a host usually leaves AgentDir empty (~/.mcprt/agent).
func scratchDir() string {
	dir, err := os.MkdirTemp("", "mcprt-example-agent-")
	if err != nil {
		log.Fatal(err)
	}
	return dir
}

// Start the runtime and register its tools with the model loop: the `mcp`
// proxy tool and the events tool `mcp_events` (and direct tools, when the
// configuration asks for them). Servers start lazily, on first use.
func ExampleStart() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close() // closes connections and reaps server processes

	for _, t := range rt.Tools() {
		fmt.Println(t.Name)
	}
	fmt.Println(rt.Servers())
	// Output:
	// mcp
	// mcp_events
	// [demo]
}

// Call a server's tool the way a model does: through the `mcp` tool, with
// the tool's name and its arguments. The result's Text is what the model
// reads; a failure has IsError set and a stable code (ErrorCode).
func ExampleTool_Execute() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	mcp, _ := rt.Tool(mcprt.MCPToolName)
	res := mcp.Execute(ctx, json.RawMessage(`{"tool": "echo", "args": {"message": "hello"}}`))
	fmt.Println(res.Text)

	res = mcp.Execute(ctx, json.RawMessage(`{"tool": "no_such_tool"}`))
	fmt.Println(res.IsError, res.ErrorCode())
	// Output:
	// echo: hello
	// true tool_not_found
}

// Subscribe to a server's events through the `mcp_events` tool, as a model
// does: events arrive later, batched, as Host.Deliver wakeups (here a
// host that prints the wakeup's kind). The demo server's clock.tick
// event fires every second.
func ExampleRuntime_Tool_events() {
	ctx := context.Background()
	woken := make(chan string, 8)
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir(), Host: printHost{woken}})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	events, _ := rt.Tool(mcprt.EventsToolName)
	res := events.Execute(ctx, json.RawMessage(`{"action": "subscribe", "server": "demo", "name": "clock.tick"}`))
	if res.IsError {
		log.Fatal(res.Text)
	}
	fmt.Println(<-woken) // the first wakeup
	// Output:
	// mcp-events
}

// printHost passes the kind of each delivery on.
type printHost struct{ woken chan<- string }

func (h printHost) Deliver(_ context.Context, m mcprt.HostMessage) {
	select {
	case h.woken <- m.Kind:
	default:
	}
}

func (printHost) Notify(context.Context, mcprt.Notice) {}

// Call a tool from Go, with typed content and errors: for hosts that
// drive servers themselves rather than through the model.
func ExampleRuntime_CallTool() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	res, err := rt.CallTool(ctx, "demo", "add", map[string]any{"a": 2, "b": 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Type, res.Content[0].Text)

	if _, err := rt.Connect(ctx, "demo", false); err != nil { // lists the catalog
		log.Fatal(err)
	}
	_, err = rt.CallTool(ctx, "demo", "no_such_tool", nil)
	fmt.Println(errors.Is(err, mcprt.ErrToolNotFound))
	_, err = rt.CallTool(ctx, "nosuch", "add", nil)
	fmt.Println(errors.Is(err, mcprt.ErrServerNotFound))
	// Output:
	// text 5
	// true
	// true
}
