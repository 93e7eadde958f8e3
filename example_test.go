package mcprt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
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
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from the demo"), 0o600); err != nil {
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

// List what a server offers, typed: its tools, resources, templates and
// prompts as the catalog knows them (cached or listed; Connect lists them
// afresh), each with its _meta.
func ExampleRuntime_ServerResources() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	if _, err := rt.Connect(ctx, "demo", false); err != nil {
		log.Fatal(err)
	}
	resources, _ := rt.ServerResources("demo")
	for _, r := range resources {
		fmt.Println("resource", r.URI, string(r.Meta))
	}
	templates, _ := rt.ServerTemplates("demo")
	for _, t := range templates {
		fmt.Println("template", t.URITemplate)
	}
	prompts, _ := rt.ServerPrompts("demo")
	for _, p := range prompts {
		fmt.Println("prompt", p.Name, p.Arguments[0].Name)
	}
	// Output:
	// resource demo://about {"mcprt.dev/demo":true}
	// template demo://files/{name}
	// prompt greet name
}

// Read a resource from Go, typed: text, or a blob's bytes, per item.
// ReadTemplate expands a template (RFC 6570) first.
func ExampleRuntime_ReadTemplate() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	if _, err := rt.Connect(ctx, "demo", false); err != nil { // lists the templates
		log.Fatal(err)
	}
	res, err := rt.ReadTemplate(ctx, "demo", "demo://files/{name}", map[string]any{"name": "hello.txt"})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range res.Contents {
		fmt.Println(c.URI, c.MIMEType, c.Text)
	}
	_, err = rt.ReadResource(ctx, "demo", "https://user:pw@example.com/")
	fmt.Println(errors.Is(err, mcprt.ErrInvalidArgs))
	// Output:
	// demo://files/hello.txt text/plain hello from the demo
	// true
}

// Render a server's prompt with arguments.
func ExampleRuntime_GetPrompt() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	res, err := rt.GetPrompt(ctx, "demo", "greet", map[string]string{"name": "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Messages[0].Role, res.Messages[0].Text)
	// Output:
	// user Say hello to Ada.
}

// Subscribe to a server's event from Go: the handler gets typed events
// (and status changes) directly, without the model. Cancelling ctx, or
// Stop, ends the subscription. The demo's clock.tick fires every second.
func ExampleRuntime_Subscribe() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	events := make(chan mcprt.Event, 16)
	sub, err := rt.Subscribe(ctx, "demo", "clock.tick", nil, func(d mcprt.Delivery) {
		if d.Event != nil {
			select {
			case events <- *d.Event:
			default: // the handler must not block
			}
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Stop()
	e := <-events
	fmt.Println(e.Server, e.Name, e.ID != "", len(e.Data) > 0)
	// Output:
	// demo clock.tick true true
}

// The configured servers and their status, from what the runtime knows:
// Status never connects anything (WatchStatus sends every change).
func ExampleRuntime_Status() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	for _, s := range rt.Status().Servers {
		fmt.Println(s.Name, s.Status)
	}
	if _, err := rt.Connect(ctx, "demo", false); err != nil {
		log.Fatal(err)
	}
	for _, s := range rt.Status().Servers {
		fmt.Println(s.Name, s.Status, s.ToolCount)
	}
	// Output:
	// demo not-connected
	// demo connected 7
}

// A server's tools, typed, as the catalog knows them: name, description,
// schemas, annotations and _meta, without connecting (ok is false before
// the first listing).
func ExampleRuntime_ServerTools() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	_, ok := rt.ServerTools("demo")
	fmt.Println(ok)
	if _, err := rt.Connect(ctx, "demo", false); err != nil {
		log.Fatal(err)
	}
	tools, _ := rt.ServerTools("demo")
	for _, t := range tools {
		if t.Name == "add" {
			fmt.Println(t.Name, "-", t.Description)
		}
	}
	// Output:
	// false
	// add - Returns the sum of a and b.
}

// Read a resource by URI, typed: each item's URI, MIME type and text (or
// a blob's bytes in Data).
func ExampleRuntime_ReadResource() {
	ctx := context.Background()
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: demoConfig(), AgentDir: scratchDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	res, err := rt.ReadResource(ctx, "demo", "demo://about")
	if err != nil {
		log.Fatal(err)
	}
	c := res.Contents[0]
	fmt.Println(c.URI, c.MIMEType, strings.SplitN(c.Text, ".", 2)[0])
	// Output:
	// demo://about text/plain Demo MCP server of mcprt
}
