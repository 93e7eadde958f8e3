package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/mcpline"
)

// Version is the server version the test server reports.
const Version = "1.0.0"

// maxBig bounds the big tool's answer.
const maxBig = 1 << 30

// newServer builds the MCP server with every test tool.
func newServer(cfg config) *server.MCPServer {
	opts := []server.ServerOption{server.WithToolCapabilities(true)}
	if cfg.script != "" {
		opts = append(opts, server.WithResourceCapabilities(false, true), server.WithPromptCapabilities(true))
	}
	if cfg.instructions != "" {
		opts = append(opts, server.WithInstructions(cfg.instructions))
	}
	if cfg.pageSize > 0 {
		opts = append(opts, server.WithPaginationLimit(cfg.pageSize))
	}
	s := server.NewMCPServer(cfg.name, Version, opts...)
	s.AddTools(tools()...)
	for i := range cfg.extraTools {
		s.AddTool(mcp.NewTool(fmt.Sprintf("extra_%03d", i), mcp.WithDescription("Extra dummy tool; returns ok.")), okTool)
	}
	return s
}

// ToolNames lists the test server's built-in tools, sorted.
func ToolNames() []string {
	var names []string
	for _, t := range tools() {
		names = append(names, t.Tool.Name)
	}
	sort.Strings(names)
	return names
}

func tools() []server.ServerTool {
	str := func(name, desc string) mcp.ToolOption {
		return mcp.WithString(name, mcp.Required(), mcp.Description(desc))
	}
	num := func(name, desc string) mcp.ToolOption {
		return mcp.WithNumber(name, mcp.Required(), mcp.Description(desc))
	}
	tool := func(name, desc string, h server.ToolHandlerFunc, opts ...mcp.ToolOption) server.ServerTool {
		return server.ServerTool{Tool: mcp.NewTool(name, append([]mcp.ToolOption{mcp.WithDescription(desc)}, opts...)...), Handler: h}
	}
	return []server.ServerTool{
		tool("echo", "Returns 'echo: <message>'.", echoTool, str("message", "Text to echo.")),
		tool("add", "Returns the sum of a and b.", addTool, num("a", "First addend."), num("b", "Second addend.")),
		tool("hang", "Blocks until cancelled; logs the cancellation to $"+EnvCancelLog+".", hangTool),
		tool("slow", "Waits ms milliseconds, then returns 'slept <ms>'.", slowTool, num("ms", "Milliseconds to wait.")),
		tool("crash", "Exits the server process with status 3 without answering.", crashTool),
		tool("big", "Returns one text content of the given number of 'x' bytes.", bigTool, num("bytes", "Size of the answer.")),
		tool("stderr", "Writes text and a newline to the server's stderr.", stderrTool, str("text", "Text to write.")),
		tool("env", "Returns an environment variable's value, or <unset>.", envTool, str("name", "Variable name.")),
		tool("environ", "Returns the sorted names of all environment variables, one per line.", environTool),
		tool("cwd", "Returns the server's working directory.", cwdTool),
		tool("grandchild", "Starts 'sleep 300' as a child process and returns its PID.", grandchildTool),
		tool("notify", "Sends notifications/tools/list_changed, then returns ok.", notifyTool),
		tool("fail", "Returns a tool error: 'failed on purpose'.", failTool),
		tool("header", "Returns an HTTP request header's value, or <unset> (HTTP modes only).", headerTool, str("name", "Header name.")),
	}
}

func text(s string) *mcp.CallToolResult { return mcp.NewToolResultText(s) }

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func okTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return text("ok"), nil
}

func echoTool(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	msg, err := req.RequireString("message")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return text("echo: " + msg), nil
}

func addTool(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, errA := req.RequireFloat("a")
	b, errB := req.RequireFloat("b")
	if err := errors.Join(errA, errB); err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return text(formatNumber(a + b)), nil
}

// hangTool blocks until its request is cancelled. When the request carries a
// progress token it first sends one notifications/progress, so a test knows
// the call has reached the handler.
func hangTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	progress(ctx, req, "hang started")
	<-ctx.Done()
	if path := os.Getenv(EnvCancelLog); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			_, _ = f.WriteString("cancelled\n")
			_ = f.Close()
		}
	}
	return nil, fmt.Errorf("hang: %w", ctx.Err())
}

func slowTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ms, err := req.RequireFloat("ms")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if clock.Wait(ctx, clock.Real{}, time.Duration(ms*float64(time.Millisecond))) {
		return text("slept " + formatNumber(ms)), nil
	}
	return nil, fmt.Errorf("slow: %w", ctx.Err())
}

func crashTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	os.Exit(3)
	return nil, nil
}

// progress sends one notifications/progress when the request carries a
// progress token (over Streamable HTTP this makes the response an SSE
// stream).
func progress(ctx context.Context, req mcp.CallToolRequest, msg string) {
	if meta := req.Params.Meta; meta != nil && meta.ProgressToken != nil {
		if srv := server.ServerFromContext(ctx); srv != nil {
			_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
				"progressToken": meta.ProgressToken,
				"progress":      0,
				"message":       msg,
			})
		}
	}
}

// bigTool answers bytes 'x' bytes; with a progress token it sends one
// notifications/progress first, so over Streamable HTTP the answer is an
// SSE event.
func bigTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	progress(ctx, req, "big started")
	n, err := req.RequireInt("bytes")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if n < 0 || n > maxBig {
		return mcp.NewToolResultError(fmt.Sprintf("bytes must be between 0 and %d", maxBig)), nil
	}
	return text(strings.Repeat("x", n)), nil
}

func stderrTool(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	msg, err := req.RequireString("text")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if _, err := fmt.Fprintln(os.Stderr, msg); err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return text("ok"), nil
}

func envTool(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, err := req.RequireString("name")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if v, ok := os.LookupEnv(name); ok {
		return text(v), nil
	}
	return text("<unset>"), nil
}

func environTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var names []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	sort.Strings(names)
	return text(strings.Join(names, "\n")), nil
}

func cwdTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	dir, err := os.Getwd()
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return text(dir), nil
}

// grandchildTool starts "sleep 300" in the server's process group and reaps
// it in the background, so it never lingers as a zombie.
func grandchildTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	go func() { _ = cmd.Wait() }()
	return text(strconv.Itoa(cmd.Process.Pid)), nil
}

func notifyTool(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return mcp.NewToolResultError("no server in context"), nil
	}
	if err := srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationToolsListChanged), nil); err != nil {
		return mcp.NewToolResultError("notify: " + err.Error()), nil
	}
	return text("ok"), nil
}

func failTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultError("failed on purpose"), nil
}

// headerTool reports a header of the HTTP request that carried the call:
// mcp-go's own on Streamable HTTP, the POST's on legacy SSE.
func headerTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, err := req.RequireString("name")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if v := req.Header.Get(name); v != "" {
		return text(v), nil
	}
	if v := mcpline.RequestHeader(ctx).Get(name); v != "" {
		return text(v), nil
	}
	return text("<unset>"), nil
}
