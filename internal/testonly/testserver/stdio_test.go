package testserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// newStdioClient starts the server through mcp-go's stdio transport.
func newStdioClient(t *testing.T, args string, opts []client.ClientOption, env ...string) (*client.Client, *watchBuffer) {
	t.Helper()
	stderr := &watchBuffer{}
	tr := transport.NewStdioWithOptions(selfExe(t), serverEnv(args, env...), nil, transport.WithCommandStderrWriter(stderr))
	c := client.NewClient(tr, opts...)
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, stderr
}

// newProcClient talks to p through mcp-go's client; in records what the
// client writes.
func newProcClient(t *testing.T, ctx context.Context, p *proc) (*client.Client, *watchBuffer) {
	t.Helper()
	in := &watchBuffer{next: p.stdin}
	c := client.NewClient(transport.NewIO(p.stdout, in, nil))
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, in
}

func TestStdioInitializeListEcho(t *testing.T) {
	for _, tc := range []struct {
		name, version string
	}{
		{"modern", mcp.ProtocolVersion20260728},
		{"legacy", mcp.LATEST_LEGACY_PROTOCOL_VERSION},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			c, _ := newStdioClient(t, "--name demo-x --instructions be-nice",
				[]client.ClientOption{client.WithProtocolVersion(tc.version)})
			res := initialize(t, ctx, c)
			if c.ProtocolVersion() != tc.version {
				t.Errorf("protocol version = %q, want %q", c.ProtocolVersion(), tc.version)
			}
			if res.ServerInfo.Name != "demo-x" || res.Instructions != "be-nice" {
				t.Errorf("server info %+v, instructions %q", res.ServerInfo, res.Instructions)
			}
			list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if tool.InputSchema.Type != "object" {
					t.Errorf("tool %s: input schema type %q", tool.Name, tool.InputSchema.Type)
				}
			}
			sort.Strings(names)
			if !slices.Equal(names, ToolNames()) {
				t.Errorf("tools = %v, want %v", names, ToolNames())
			}
			if got := callText(t, ctx, c, "echo", map[string]any{"message": "hi"}); got != "echo: hi" {
				t.Errorf("echo = %q", got)
			}
		})
	}
}

func TestStdioPagination(t *testing.T) {
	ctx := testCtx(t)
	c, _ := newStdioClient(t, "--page-size 2 --extra-tools 5", nil)
	initialize(t, ctx, c)
	page, err := c.ListToolsByPage(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tools) != 2 || page.NextCursor == "" {
		t.Fatalf("first page: %d tools, nextCursor %q", len(page.Tools), page.NextCursor)
	}
	all, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(ToolNames()) + 5; len(all.Tools) != want {
		t.Fatalf("all pages: %d tools, want %d", len(all.Tools), want)
	}
	if got := callText(t, ctx, c, "extra_004", nil); got != "ok" {
		t.Errorf("extra_004 = %q", got)
	}
}

func TestStdioModernOnly(t *testing.T) {
	ctx := testCtx(t)
	p := startProc(t, "--modern-only")
	p.send(t, fmt.Sprintf(legacyInitialize, 7))
	r := decodeReply(t, p.recv(t, ctx))
	if string(r.ID) != "7" || r.Error == nil || r.Error.Code != mcp.METHOD_NOT_FOUND || r.Error.Message != ModernOnlyMessage {
		t.Fatalf("initialize reply = %+v (error %+v)", r, r.Error)
	}

	c, _ := newStdioClient(t, "--modern-only", []client.ClientOption{client.WithProtocolVersion(mcp.ProtocolVersion20260728)})
	initialize(t, ctx, c)
	if got := callText(t, ctx, c, "echo", map[string]any{"message": "modern"}); got != "echo: modern" {
		t.Errorf("echo = %q", got)
	}

	legacy, _ := newStdioClient(t, "--modern-only", []client.ClientOption{client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION)})
	if _, err := legacy.Initialize(ctx, initRequest()); err == nil || !strings.Contains(err.Error(), "server/discover") {
		t.Fatalf("legacy initialize error = %v", err)
	}
}

func TestStdioIgnoreUnknown(t *testing.T) {
	ctx := testCtx(t)
	p := startProc(t, "--ignore-unknown")
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"foo/bar","params":{}}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	p.send(t, fmt.Sprintf(legacyInitialize, 3))
	p.send(t, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	// Lines are filtered in order on the reading goroutine, so the dropped
	// requests can never be answered after the later ones.
	got := map[string]bool{}
	for len(got) < 2 {
		r := decodeReply(t, p.recv(t, ctx))
		if r.Error != nil {
			t.Fatalf("reply %s: error %+v", r.ID, r.Error)
		}
		got[string(r.ID)] = true
	}
	if !got["3"] || !got["4"] {
		t.Fatalf("answered ids %v, want exactly 3 and 4", got)
	}

	c, _ := newStdioClient(t, "--ignore-unknown", []client.ClientOption{client.WithDiscoverTimeout(300 * time.Millisecond)})
	initialize(t, ctx, c)
	if c.ProtocolVersion() != mcp.LATEST_LEGACY_PROTOCOL_VERSION {
		t.Errorf("fell back to %q", c.ProtocolVersion())
	}
	if got := callText(t, ctx, c, "echo", map[string]any{"message": "old"}); got != "echo: old" {
		t.Errorf("echo = %q", got)
	}
}

func TestStdioGarbage(t *testing.T) {
	ctx := testCtx(t)
	p := startProc(t, "--garbage")
	if line := p.recv(t, ctx); line != "this is not json" {
		t.Fatalf("first line = %q", line)
	}
	p.send(t, fmt.Sprintf(legacyInitialize, 1))
	if r := decodeReply(t, p.recv(t, ctx)); string(r.ID) != "1" || r.Error != nil {
		t.Fatalf("initialize reply = %+v", r)
	}
}

func TestStdioCancelHang(t *testing.T) {
	ctx := testCtx(t)
	cancelLog := filepath.Join(t.TempDir(), "cancel.log")
	p := startProc(t, "", EnvCancelLog+"="+cancelLog)
	c, sent := newProcClient(t, ctx, p)
	started := make(chan struct{}, 1)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	})
	initialize(t, ctx, c)

	hangCtx, cancelHang := context.WithCancel(ctx)
	defer cancelHang()
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(hangCtx, mcp.CallToolRequest{Params: mcp.CallToolParams{
			Name: "hang", Meta: &mcp.Meta{ProgressToken: "hang-1"},
		}})
		errc <- err
	}()
	waitFor(t, ctx, started, "hang to start")

	// The server must keep serving while hang blocks.
	if got := callText(t, ctx, c, "echo", map[string]any{"message": "meanwhile"}); got != "echo: meanwhile" {
		t.Fatalf("echo = %q", got)
	}

	cancelHang()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("hang returned without error")
		}
	case <-ctx.Done():
		t.Fatal("hang call did not return after cancel")
	}
	waitFor(t, ctx, sent.seen(`"notifications/cancelled"`), "notifications/cancelled to be sent")

	// The server handles the cancellation, and waits for hang to return,
	// before it reads the next line.
	callText(t, ctx, c, "echo", map[string]any{"message": "after"})
	data, err := os.ReadFile(cancelLog)
	if err != nil || string(data) != "cancelled\n" {
		t.Fatalf("cancel log = %q, %v", data, err)
	}
}

func TestStdioCancelledRequestIsNotAnswered(t *testing.T) {
	ctx := testCtx(t)
	cancelLog := filepath.Join(t.TempDir(), "cancel.log")
	p := startProc(t, "", EnvCancelLog+"="+cancelLog)
	p.send(t, fmt.Sprintf(legacyInitialize, 1))
	decodeReply(t, p.recv(t, ctx))
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(t, `{"jsonrpc":"2.0","id":"h","method":"tools/call","params":{"name":"hang","arguments":{},"_meta":{"progressToken":5}}}`)
	if r := decodeReply(t, p.recv(t, ctx)); r.Method != string(mcp.MethodNotificationProgress) {
		t.Fatalf("want a progress notification, got %+v", r)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h","reason":"test"}}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if r := decodeReply(t, p.recv(t, ctx)); string(r.ID) != "2" {
		t.Fatalf("after cancel got %+v, want the ping reply", r)
	}
	if data, err := os.ReadFile(cancelLog); err != nil || string(data) != "cancelled\n" {
		t.Fatalf("cancel log = %q, %v", data, err)
	}
}

func TestStdioNotifyPrecedesResponse(t *testing.T) {
	ctx := testCtx(t)
	c, _ := newStdioClient(t, "", nil)
	changed := make(chan struct{}, 1)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed <- struct{}{}
		}
	})
	initialize(t, ctx, c)
	if got := callText(t, ctx, c, "notify", nil); got != "ok" {
		t.Fatalf("notify = %q", got)
	}
	select {
	case <-changed:
	default:
		t.Fatal("list_changed did not arrive before the notify response")
	}
}

func TestStdioTools(t *testing.T) {
	ctx := testCtx(t)
	c, stderr := newStdioClient(t, "", nil, "MCPRT_TEST_FOO=bar")
	initialize(t, ctx, c)
	checks := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"add", map[string]any{"a": 1.5, "b": 2}, "3.5"},
		{"slow", map[string]any{"ms": 5}, "slept 5"},
		{"env", map[string]any{"name": "MCPRT_TEST_FOO"}, "bar"},
		{"env", map[string]any{"name": "MCPRT_TEST_SURELY_UNSET"}, "<unset>"},
		{"stderr", map[string]any{"text": "to-stderr-42"}, "ok"},
	}
	for _, ck := range checks {
		if got := callText(t, ctx, c, ck.tool, ck.args); got != ck.want {
			t.Errorf("%s %v = %q, want %q", ck.tool, ck.args, got, ck.want)
		}
	}
	waitFor(t, ctx, stderr.seen("to-stderr-42\n"), "the stderr tool's output")

	if got := callText(t, ctx, c, "big", map[string]any{"bytes": 100000}); len(got) != 100000 || strings.Trim(got, "x") != "" {
		t.Errorf("big: %d bytes", len(got))
	}
	names := strings.Split(callText(t, ctx, c, "environ", nil), "\n")
	if !sort.StringsAreSorted(names) || !slices.Contains(names, "MCPRT_TEST_FOO") || slices.Contains(names, EnvArgs) {
		t.Errorf("environ = %v", names)
	}
	wd, _ := os.Getwd()
	if got := callText(t, ctx, c, "cwd", nil); got != wd {
		t.Errorf("cwd = %q, want %q", got, wd)
	}

	res, err := call(ctx, c, "fail", nil)
	if err != nil || !res.IsError || mcp.GetTextFromContent(res.Content[0]) != "failed on purpose" {
		t.Errorf("fail = %+v, %v", res, err)
	}

	pid, err := strconv.Atoi(callText(t, ctx, c, "grandchild", nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := probePid(pid); err != nil {
		t.Errorf("grandchild %d not running: %v", pid, err)
	}
	killPid(pid)
}

func TestStdioCrash(t *testing.T) {
	ctx := testCtx(t)
	p := startProc(t, "")
	c, _ := newProcClient(t, ctx, p)
	initialize(t, ctx, c)
	if _, err := call(ctx, c, "crash", nil); err == nil {
		t.Fatal("crash answered")
	}
	select {
	case <-p.wait():
	case <-ctx.Done():
		t.Fatal("server did not exit")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
}

func TestSocket(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "s.sock")
	p := startProc(t, "--socket "+path)
	if where := listenURL(t, ctx, p); where != path {
		t.Fatalf("LISTEN %q, want %q", where, path)
	}
	for i := range 2 {
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(transport.NewIO(conn, conn, nil))
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		initialize(t, ctx, c)
		msg := fmt.Sprint("conn ", i)
		if got := callText(t, ctx, c, "echo", map[string]any{"message": msg}); got != "echo: "+msg {
			t.Errorf("echo = %q", got)
		}
	}
}

func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--http", "127.0.0.1:0", "--sse", "127.0.0.1:0"},
		{"--post-status", "500"},
		{"--http", "127.0.0.1:0", "--post-status", "42"},
		{"--page-size", "-1"},
		{"--socket", "/tmp/x.sock", "--garbage"},
		{"--http", "127.0.0.1:0", "--ignore-unknown"},
		{"--sse", "127.0.0.1:0", "--modern-only"},
		{"stray"},
		{"--no-such-flag"},
	} {
		if code := Main(args); code != 2 {
			t.Errorf("Main(%q) = %d, want 2", args, code)
		}
	}
	if code := Main([]string{"--http", "0.0.0.0:0"}); code != 1 {
		t.Errorf("Main(--http 0.0.0.0:0) = %d, want 1", code)
	}
}
