package demoserver

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/eventsrv"
	"github.com/mcprt/mcprt/internal/mcpserve"
)

// DefaultName is the server name reported when [Options.Name] is empty.
const DefaultName = "mcprt-demo"

// DefaultVersion is the server version reported when [Options.Version] is
// empty.
const DefaultVersion = "0.1.0"

// Instructions is the instructions text the demo server gives clients.
const Instructions = "Demo MCP server of mcprt. echo repeats a message, add sums two numbers, " +
	"now tells the current UTC time, list_files lists the files in the server's root directory " +
	"and read_file returns one of them as text (UTF-8, at most 1 MiB). " +
	"It also speaks MCP events (events/list, events/stream): fs.changed reports files created, changed " +
	"or removed under the root, clock.tick ticks every N seconds; demo_fault disturbs the open event " +
	"streams (disconnect, stall, resume, gap, error, terminate)."

// Options configures the demo server. The zero value is ready to use.
type Options struct {
	// Root is the directory read_file and list_files are confined to, and
	// the one fs.changed watches. Empty means the current directory
	// (resolved at each call).
	Root string
	// Name is the server name reported to clients; empty means DefaultName.
	Name string
	// Version is the server version reported to clients; empty means
	// DefaultVersion.
	Version string
	// Clock drives the events (timestamps, heartbeats, polling, ticks);
	// nil means the wall clock.
	Clock clock.Clock
	// StateDir keeps the event logs and the last scan of the root, so that
	// a restarted server replays from its old cursors and reports what
	// changed while it was down; empty keeps them in memory.
	StateDir string
	// Heartbeat is the interval of heartbeats on event streams; zero means
	// 30 s, a negative value none.
	Heartbeat time.Duration
	// Poll is how often fs.changed scans the root while it has streams;
	// zero means DefaultPoll.
	Poll time.Duration
}

// demo is one demo server: the MCP server with its tools and the events
// source.
type demo struct {
	mcp    *mcpserve.Server
	events *eventsrv.Server
	watch  *fsWatch
}

// newDemo builds the demo server with the tools echo, add, now, read_file,
// list_files and demo_fault, the resource demo://about, the template
// demo://files/{name}, the prompt greet, and the event types fs.changed and
// clock.tick.
func newDemo(opts Options) (*demo, error) {
	name, version := opts.Name, opts.Version
	if name == "" {
		name = DefaultName
	}
	if version == "" {
		version = DefaultVersion
	}
	fs := files{root: opts.Root}
	events, watch, err := newEvents(opts, fs)
	if err != nil {
		return nil, err
	}
	s := mcpserve.New(mcpserve.Options{
		Name: name, Version: version, Instructions: Instructions,
		Experimental: map[string]any{"events": map[string]any{"delivery": []string{eventsrv.DeliveryPush}}},
	})
	s.AddTools(
		mcpserve.Tool{
			Tool: mcp.NewTool("echo",
				mcp.WithDescription("Returns 'echo: <message>'."),
				mcp.WithString("message", mcp.Required(), mcp.Description("Text to echo.")),
				mcp.WithReadOnlyHintAnnotation(true),
			),
			Handler: echoTool,
		},
		mcpserve.Tool{
			Tool: mcp.NewTool("add",
				mcp.WithDescription("Returns the sum of a and b."),
				mcp.WithNumber("a", mcp.Required(), mcp.Description("First addend.")),
				mcp.WithNumber("b", mcp.Required(), mcp.Description("Second addend.")),
				mcp.WithReadOnlyHintAnnotation(true),
			),
			Handler: addTool,
		},
		mcpserve.Tool{
			Tool: mcp.NewTool("now",
				mcp.WithDescription("Returns the current UTC time in RFC 3339 format."),
				mcp.WithReadOnlyHintAnnotation(true),
			),
			Handler: nowTool,
		},
		mcpserve.Tool{
			Tool: mcp.NewTool("read_file",
				mcp.WithDescription("Returns the UTF-8 text of a file under the server's root directory (at most 1 MiB). "+
					"The path is relative to the root; absolute paths and paths leaving the root are refused."),
				mcp.WithString("path", mcp.Required(), mcp.Description("File path relative to the root directory.")),
				mcp.WithReadOnlyHintAnnotation(true),
			),
			Handler: fs.readTool,
		},
		mcpserve.Tool{
			Tool: mcp.NewTool("list_files",
				mcp.WithDescription("Lists the names in the server's root directory (not recursive), sorted, one per line."),
				mcp.WithReadOnlyHintAnnotation(true),
			),
			Handler: fs.listTool,
		},
		events.FaultTool(FaultToolName, "Disturbs the open event streams (all, or those of event type name): "+
			"disconnect drops the connection (stdio: the server exits; HTTP: the stream's response ends), "+
			"stall stops events and heartbeats (for ms milliseconds, or until resume), gap skips what is pending "+
			"and reports truncated replay, error sends a recoverable upstream error, terminate ends the subscriptions.",
			DemoFaults),
	)
	addCatalog(s, fs)
	return &demo{mcp: s, events: events, watch: watch}, nil
}

// close stops the file watch and closes the state files.
func (d *demo) close() {
	d.watch.stop()
	d.events.Close()
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
