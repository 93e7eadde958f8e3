package demoserver

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startStdio runs ServeStdio over in-memory pipes and returns a client
// talking to it.
func startStdio(t *testing.T, opts Options, copts ...client.ClientOption) *client.Client {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), serverIn, serverOut, opts) }()
	c := client.NewClient(transport.NewIO(clientIn, clientOut, nil), copts...)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close() // closes clientOut: the server reads end of file
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		_ = serverOut.Close()
	})
	return c
}

func initialize(t *testing.T, ctx context.Context, c *client.Client) *mcp.InitializeResult {
	t.Helper()
	res, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "demoserver-test", Version: "0"},
	}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

func call(t *testing.T, ctx context.Context, c *client.Client, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s: content %v", name, res.Content)
	}
	return mcp.GetTextFromContent(res.Content[0]), res.IsError
}

func callOK(t *testing.T, ctx context.Context, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	text, isError := call(t, ctx, c, name, args)
	if isError {
		t.Fatalf("call %s %v: tool error %q", name, args, text)
	}
	return text
}

// exercise runs the checks every transport must pass.
func exercise(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	res := initialize(t, ctx, c)
	if res.ServerInfo.Name != DefaultName || res.Instructions != Instructions {
		t.Errorf("server info %+v, instructions %q", res.ServerInfo, res.Instructions)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	if want := []string{"add", FaultToolName, "echo", "list_files", "now", "read_file"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if got := callOK(t, ctx, c, "echo", map[string]any{"message": "hi"}); got != "echo: hi" {
		t.Errorf("echo = %q", got)
	}
	if got := callOK(t, ctx, c, "add", map[string]any{"a": 2, "b": 0.5}); got != "2.5" {
		t.Errorf("add = %q", got)
	}
	stamp, err := time.Parse(time.RFC3339, callOK(t, ctx, c, "now", nil))
	if err != nil || stamp.Location() != time.UTC || time.Since(stamp).Abs() > time.Hour {
		t.Errorf("now = %v, %v", stamp, err)
	}
	if got := callOK(t, ctx, c, "read_file", map[string]any{"path": "hello.txt"}); got != "hello\n" {
		t.Errorf("read_file = %q", got)
	}
	if text, isError := call(t, ctx, c, "read_file", map[string]any{"path": "../outside/secret.txt"}); !isError || !strings.Contains(text, "leaves the root") {
		t.Errorf("read_file escape = %q, isError %v", text, isError)
	}
	if got := callOK(t, ctx, c, "list_files", nil); got != "hello.txt" {
		t.Errorf("list_files = %q", got)
	}
}

func simpleRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestStdio(t *testing.T) {
	for _, version := range []string{mcp.ProtocolVersion20260728, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			ctx := testCtx(t)
			root := simpleRoot(t)
			c := startStdio(t, Options{Root: root}, client.WithProtocolVersion(version))
			exercise(t, ctx, c)
		})
	}
}

func TestServeStdioStopsWithContext(t *testing.T) {
	serverIn, clientOut := io.Pipe()
	defer clientOut.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, serverIn, io.Discard, Options{}) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ServeStdio = %v, want nil", err)
	}
}

func TestServeStdioOptions(t *testing.T) {
	ctx := testCtx(t)
	c := startStdio(t, Options{Name: "n", Version: "9"})
	res := initialize(t, ctx, c)
	if res.ServerInfo.Name != "n" || res.ServerInfo.Version != "9" {
		t.Fatalf("server info %+v", res.ServerInfo)
	}
}
