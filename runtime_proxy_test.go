package mcprt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testenv"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/transports"
)

// noticeHost records notices' texts; recordingHost also their levels and
// servers.
type (
	noticeHost    struct{ recorder }
	recordingHost struct{ recorder }
)

func (h *noticeHost) Notify(_ context.Context, n messages.Notice) { h.add(n.Text) }
func (h *recordingHost) Notify(_ context.Context, n messages.Notice) {
	h.add(fmt.Sprintf("%d %s %s", n.Level, n.Server, n.Text))
}

type recorder struct {
	mu      sync.Mutex
	notices []string
}

func (h *recorder) Deliver(context.Context, messages.HostMessage) {}

func (h *recorder) add(s string) {
	h.mu.Lock()
	h.notices = append(h.notices, s)
	h.mu.Unlock()
}

func (h *recorder) all() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.notices, "\n")
}

// startWithCache starts a runtime over f with its own agent directory and a
// recording dialer over real transports.
func startWithCache(t *testing.T, f *config.File, agentDir string, host Host, hostTools ...string) (*Runtime, *recDialer) {
	t.Helper()
	real := &transports.Dialer{Clock: clock.Real{}}
	d := newRecDialer(real)
	rt, err := Start(testCtx(t), Options{Config: f, AgentDir: agentDir, Dialer: d, Host: host, HostTools: hostTools, Rand: clock.NewSeededRand(3)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rt.Close()
		real.Wait()
	})
	return rt, d
}

func toolNames(ts []Tool) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return strings.Join(out, " ")
}

// Direct tools of a server without cached metadata appear after one
// background listing (WatchTools signals it); the next runtime registers
// them from the cache without connecting; disableProxyTool hides mcp once
// every server is direct and known; 75 or more direct tools warn.
func TestDirectToolsFromTheCache(t *testing.T) {
	dir := t.TempDir()
	srv := selfServer(t, "--extra-tools 70")
	srv.DirectTools = &config.DirectTools{All: true}
	f := &config.File{MCPServers: map[string]config.Server{"t": srv}, Settings: config.Settings{DisableProxyTool: true}}
	host := &noticeHost{}
	rt, d := startWithCache(t, f, dir, host)
	changed, stop := rt.WatchTools()
	defer stop()
	if got := toolNames(rt.Tools()); got != "mcp" {
		t.Fatalf("before the cache is filled: %s", got)
	}
	ctx := testCtx(t)
	for !strings.Contains(toolNames(rt.Tools()), "t_echo") {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("the direct tools never appeared")
		}
	}
	if got := toolNames(rt.Tools()); strings.Contains(" "+got+" ", " mcp ") || !strings.HasPrefix(got, "t_add t_big") {
		t.Fatalf("after the background listing: %.80s", got)
	}
	if d.dialCount("t") != 1 {
		t.Fatalf("%d dials for the background listing", d.dialCount("t"))
	}
	if !strings.Contains(host.all(), "direct tools are registered; each costs prompt tokens") {
		t.Fatalf("no warning for 75+ direct tools: %s", host.all())
	}
	echo, _ := rt.Tool("t_echo")
	if res := echo.Execute(ctx, json.RawMessage(`{"message":"direct"}`)); res.Text != "echo: direct" {
		t.Fatalf("direct call: %q", res.Text)
	}
	rt.Close()

	rt2, d2 := startWithCache(t, f, dir, nil)
	if got := toolNames(rt2.Tools()); !strings.HasPrefix(got, "t_add t_big") {
		t.Fatalf("from the cache: %.80s", got)
	}
	snap := rt2.StatusSnapshot()
	if s := snap.Servers[0]; s.Status != "cached" || s.ToolCount < 80 || snap.TotalTools != s.ToolCount {
		t.Fatalf("status from the cache: %+v", snap)
	}
	if d2.dialCount("t") != 0 {
		t.Fatal("registering direct tools from the cache connected the server")
	}
}

// WatchStatus sends the current snapshot, one on every change, and an
// empty one at shutdown before closing.
func TestWatchStatus(t *testing.T) {
	f := &config.File{MCPServers: map[string]config.Server{"w": selfServer(t, ""), "off": {Command: "x", Disabled: true}}}
	rt, _ := startWithCache(t, f, t.TempDir(), nil)
	ch, _ := rt.WatchStatus()
	first := <-ch
	if len(first.Servers) != 2 || first.Servers[1].Status != "not-connected" || first.Servers[0].Status != "disabled" || first.DisabledCount != 1 {
		t.Fatalf("first snapshot: %+v", first)
	}
	mcp, _ := rt.Tool(MCPToolName)
	ctx := testCtx(t)
	if res := mcp.Execute(ctx, json.RawMessage(`{"tool":"w_echo","args":{"message":"x"}}`)); res.IsError {
		t.Fatal(res.Text)
	}
	for {
		s := <-ch
		if s.Servers[1].Status == "connected" && s.Servers[1].ToolCount > 0 && s.ConnectedCount == 1 && s.TotalTools == s.Servers[1].ToolCount {
			break
		}
	}
	rt.Close()
	var last StatusSnapshot
	for s := range ch {
		last = s
	}
	if len(last.Servers) != 0 {
		t.Fatalf("the last snapshot is not empty: %+v", last)
	}
}

// GetPrompt renders a prompt of server-everything; the catalog lists its
// prompts and required arguments are checked before prompts/get.
func TestGetPrompt(t *testing.T) {
	js := testenv.EverythingJS(t)
	f := &config.File{MCPServers: map[string]config.Server{"every": {Command: testenv.Node(t), Args: []string{js, "stdio"}}}}
	rt, _ := startWithCache(t, f, t.TempDir(), nil)
	ctx := testCtx(t)
	if _, err := rt.Connect(ctx, "every", false); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, p := range rt.Prompts() {
		found = found || p.Name == "args-prompt" && p.Arguments[0].Name == "city" && p.Arguments[0].Required
	}
	if !found {
		t.Fatalf("prompts: %+v", rt.Prompts())
	}
	if _, err := rt.GetPrompt(ctx, "every", "args-prompt", nil); messages.KindOf(err) != messages.KindInvalidArgs {
		t.Fatalf("missing argument: %v", err)
	}
	res, err := rt.GetPrompt(ctx, "every", "args-prompt", map[string]string{"city": "Lisbon"})
	if err != nil || !strings.Contains(res.Text, "Lisbon") || len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	mcp, _ := rt.Tool(MCPToolName)
	if res := mcp.Execute(ctx, json.RawMessage(`{"tool":"get-structured-content","args":{"location":"New York"}}`)); res.IsError || !strings.Contains(res.Text, "temperature") {
		t.Fatalf("structured content: %q", res.Text)
	}
	if res := mcp.Execute(ctx, json.RawMessage(`{"tool":"get-tiny-image"}`)); res.IsError || len(res.Images) != 1 {
		t.Fatalf("image: %q", res.Text)
	}
	if res := mcp.Execute(ctx, json.RawMessage(`{"tool":"read_architecture_md"}`)); res.IsError || len(res.Text) < 100 {
		t.Fatalf("resource tool: %q", res.Text)
	}
}

// notifications/tools/list_changed lists the catalog again, rewrites the
// cache and tells the host through WatchTools.
func TestListChangedSignalsTheHost(t *testing.T) {
	dir := t.TempDir()
	srv := selfServer(t, "")
	srv.DirectTools = &config.DirectTools{Names: []string{"echo", "notify"}}
	rt, d := startWithCache(t, &config.File{MCPServers: map[string]config.Server{"t": srv}}, dir, nil)
	ctx := testCtx(t)
	changed, stop := rt.WatchTools()
	defer stop()
	for toolNames(rt.Tools()) != "mcp t_echo t_notify" {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("direct tools: %s", toolNames(rt.Tools()))
		}
	}
	for len(changed) > 0 {
		<-changed
	}
	notify, _ := rt.Tool("t_notify")
	if res := notify.Execute(ctx, json.RawMessage(`{}`)); res.IsError {
		t.Fatal(res.Text)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools-changed signal after list_changed")
	}
	if d.dialCount("t") != 1 {
		t.Fatalf("%d dials", d.dialCount("t"))
	}
}
