package demoserver

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcprt/mcprt/clock"
)

// DefaultName is the server name reported when [Options.Name] is empty.
const DefaultName = "mcprt-demo"

// DefaultVersion is the server version reported when [Options.Version] is
// empty.
const DefaultVersion = "0.1.0"

// Instructions is the instructions text the demo server gives clients.
const Instructions = "Demo MCP server of mcprt. echo repeats a message, add sums two numbers, " +
	"now tells the current UTC time, list_files lists the files in the server's root directory " +
	"and read_file returns one of them as text (UTF-8, at most 1 MiB)."

// Options configures the demo server. The zero value is ready to use.
type Options struct {
	// Root is the directory read_file and list_files are confined to.
	// Empty means the current directory (resolved at each call).
	Root string
	// Name is the server name reported to clients; empty means DefaultName.
	Name string
	// Version is the server version reported to clients; empty means
	// DefaultVersion.
	Version string
}

// NewServer builds the demo MCP server with the tools echo, add, now,
// read_file and list_files.
func NewServer(opts Options) *server.MCPServer {
	name, version := opts.Name, opts.Version
	if name == "" {
		name = DefaultName
	}
	if version == "" {
		version = DefaultVersion
	}
	s := server.NewMCPServer(name, version,
		server.WithToolCapabilities(false),
		server.WithInstructions(Instructions),
		server.WithRecovery(),
	)
	fs := files{root: opts.Root}
	s.AddTools(
		server.ServerTool{
			Tool: mcp.NewTool("echo",
				mcp.WithDescription("Returns 'echo: <message>'."),
				mcp.WithString("message", mcp.Required(), mcp.Description("Text to echo.")),
				mcp.WithReadOnlyHintAnnotation(true),
			),
			Handler: echoTool,
		},
		server.ServerTool{
			Tool: mcp.NewTool("add",
				mcp.WithDescription("Returns the sum of a and b."),
				mcp.WithNumber("a", mcp.Required(), mcp.Description("First addend.")),
				mcp.WithNumber("b", mcp.Required(), mcp.Description("Second addend.")),
				mcp.WithReadOnlyHintAnnotation(true),
			),
			Handler: addTool,
		},
		server.ServerTool{
			Tool: mcp.NewTool("now",
				mcp.WithDescription("Returns the current UTC time in RFC 3339 format."),
				mcp.WithReadOnlyHintAnnotation(true),
			),
			Handler: nowTool,
		},
		server.ServerTool{
			Tool: mcp.NewTool("read_file",
				mcp.WithDescription("Returns the UTF-8 text of a file under the server's root directory (at most 1 MiB). "+
					"The path is relative to the root; absolute paths and paths leaving the root are refused."),
				mcp.WithString("path", mcp.Required(), mcp.Description("File path relative to the root directory.")),
				mcp.WithReadOnlyHintAnnotation(true),
			),
			Handler: fs.readTool,
		},
		server.ServerTool{
			Tool: mcp.NewTool("list_files",
				mcp.WithDescription("Lists the names in the server's root directory (not recursive), sorted, one per line."),
				mcp.WithReadOnlyHintAnnotation(true),
			),
			Handler: fs.listTool,
		},
	)
	return s
}

func echoTool(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	msg, err := req.RequireString("message")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText("echo: " + msg), nil
}

func addTool(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, errA := req.RequireFloat("a")
	b, errB := req.RequireFloat("b")
	if err := errors.Join(errA, errB); err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(strconv.FormatFloat(a+b, 'f', -1, 64)), nil
}

func nowTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(clock.Real{}.Now().UTC().Format(time.RFC3339)), nil
}

func (f files) readTool(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	path, err := req.RequireString("path")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	content, err := f.read(path)
	if err != nil {
		return mcp.NewToolResultError("read_file: " + err.Error()), nil
	}
	return mcp.NewToolResultText(content), nil
}

func (f files) listTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	names, err := f.list()
	if err != nil {
		return mcp.NewToolResultError("list_files: " + err.Error()), nil
	}
	return mcp.NewToolResultText(strings.Join(names, "\n")), nil
}
