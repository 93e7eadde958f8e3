package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
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
func startWithCache(t *testing.T, f *config.File, agentDir string, host mcprt.Host, hostTools ...string) (*mcprt.Runtime, *recDialer) {
	t.Helper()
	real := &transports.Dialer{Clock: clock.Real{}}
	d := newRecDialer(real)
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{Config: f, AgentDir: agentDir, Sim: &simseam.Seams{Dialer: d, Rand: clock.NewSeededRand(3)}, Host: host, HostTools: hostTools})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rt.Close()
		real.Wait()
	})
	return rt, d
}

func toolNames(ts []mcprt.Tool) string {
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
	if got := toolNames(rt.Tools()); got != "mcp mcp_events" {
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
	if d.DialCount("t") != 1 {
		t.Fatalf("%d dials for the background listing", d.DialCount("t"))
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
	snap := rt2.Status()
	if s := snap.Servers[0]; s.Status != "cached" || s.ToolCount < 80 || snap.TotalTools != s.ToolCount {
		t.Fatalf("status from the cache: %+v", snap)
	}
	if d2.DialCount("t") != 0 {
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
	mcp, _ := rt.Tool(mcprt.MCPToolName)
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
	var last mcprt.StatusSnapshot
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
	mcp, _ := rt.Tool(mcprt.MCPToolName)
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
	for toolNames(rt.Tools()) != "mcp t_echo t_notify mcp_events" {
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
	if d.DialCount("t") != 1 {
		t.Fatalf("%d dials", d.DialCount("t"))
	}
}

// A server that answers 401 is auth_required and shows as needing auth; a
// disabled server is server_disabled for list, connect and a prefixed call,
// and shows as disabled; neither stops the others.
func TestAuthAndDisabledServers(t *testing.T) {
	t.Parallel()
	url, _ := testenv.StartTestServer(t, "--http 127.0.0.1:0 --post-status 401")
	r := newRig(t, map[string]config.Server{"locked": {URL: url}, "off": {Command: "x", Disabled: true}, "ok": selfServer(t, "")}, true)
	wantError(t, r.exec(r.ctx, `{"server":"locked"}`), "auth_required", "locked")
	// The failure is remembered, as every connect failure is (60 s), and
	// still told as auth_required: waiting would not help.
	if res := r.exec(r.ctx, `{"tool":"locked_echo"}`); res.ErrorCode() != "auth_required" || !strings.Contains(res.Text, "HTTP 401") {
		t.Errorf("a call within the failure memory: %q", res.Text)
	}
	if n := r.dialer.DialCount("locked"); n != 1 {
		t.Errorf("the remembered failure dialed again (%d dials)", n)
	}
	for _, args := range []string{`{"server":"off"}`, `{"connect":"off"}`, `{"tool":"off_echo"}`, `{"search":"","server":"off"}`} {
		wantError(t, r.exec(r.ctx, args), "server_disabled", "off")
	}
	wantOK(t, r.exec(r.ctx, `{"tool":"ok_echo","args":{"message":"x"}}`), "echo: x")
	res := r.exec(r.ctx, `{}`)
	for _, row := range []string{"⚠ locked (needs auth)", "⊘ off (disabled)", "✓ ok ("} {
		if !strings.Contains(res.Text, row) {
			t.Errorf("status lacks %q:\n%s", row, res.Text)
		}
	}
	snap := r.rt.Status()
	byName := map[string]mcprt.ServerStatus{}
	for _, s := range snap.Servers {
		byName[s.Name] = s
	}
	if s := byName["locked"]; s.Status != "needs-auth" || !strings.Contains(s.LastError, "401") {
		t.Errorf("locked: %+v", s)
	}
	if s := byName["off"]; s.Status != "disabled" || !s.Disabled || snap.DisabledCount != 1 || snap.ConnectedCount != 1 {
		t.Errorf("off: %+v in %+v", s, snap)
	}
	if n := r.dialer.DialCount("off"); n != 0 {
		t.Errorf("the disabled server was dialled %d times", n)
	}
}

// Resources are read_ tools unless exposeResources is false.
// notifications/resources/list_changed (server-everything registers a
// session resource when gzip-file-as-resource runs) lists the catalog
// again: the new resource's read_ tool appears in list and as a direct
// tool, the host is told through WatchTools, and the cache holds it.
func TestResourceToolsAndListChanged(t *testing.T) {
	dir := t.TempDir()
	every := config.Server{Command: testenv.Node(t), Args: []string{testenv.EverythingJS(t), "stdio"}, DirectTools: &config.DirectTools{All: true}}
	hidden := every
	no := false
	hidden.ExposeResources = &no
	f := &config.File{MCPServers: map[string]config.Server{"every": every, "hidden": hidden}}
	rt, _ := startWithCache(t, f, dir, nil)
	ctx := testCtx(t)
	for _, s := range []string{"every", "hidden"} {
		if _, err := rt.Connect(ctx, s, false); err != nil {
			t.Fatal(err)
		}
	}
	// exposeResources: false leaves out the read_ tools, direct and proxied.
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	if names := toolNames(rt.Tools()); strings.Contains(names, "hidden_read_") || !strings.Contains(names, "hidden_echo") || !strings.Contains(names, "every_read_architecture_md") {
		t.Fatalf("tools: %s", names)
	}
	if res := mcp.Execute(ctx, json.RawMessage(`{"server":"hidden"}`)); strings.Contains(res.Text, "- read_") || !strings.Contains(res.Text, "Resource templates:") {
		t.Fatalf("list of hidden:\n%s", res.Text)
	}
	const newTool = "every_read_hello_txt_gz"
	if strings.Contains(toolNames(rt.Tools()), newTool) {
		t.Fatal("the session resource exists before the tool ran")
	}
	changed, stop := rt.WatchTools()
	defer stop()
	// Its input schema uses draft-07's format, so it is not a direct tool:
	// the proxy calls it.
	res := mcp.Execute(ctx, json.RawMessage(`{"tool":"every_gzip-file-as-resource","args":{"name":"hello.txt.gz","data":"data:text/plain;base64,aGVsbG8=","outputType":"resourceLink"}}`))
	if res.IsError {
		t.Fatal(res.Text)
	}
	for !strings.Contains(toolNames(rt.Tools()), newTool) {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("the new resource tool never appeared: %s", toolNames(rt.Tools()))
		}
	}
	if res := mcp.Execute(ctx, json.RawMessage(`{"server":"every"}`)); !strings.Contains(res.Text, "- read_hello_txt_gz - Read the resource demo://resource/session/") {
		t.Fatalf("list lacks the new resource:\n%s", res.Text)
	}
	read, _ := rt.Tool(newTool)
	// Binary content goes to a file of its own that the text names.
	res = read.Execute(ctx, json.RawMessage(`{}`))
	_, after, ok := strings.Cut(res.Text, " saved to ")
	path, _, _ := strings.Cut(after, ": application/gzip")
	if b, err := os.ReadFile(path); res.IsError || !ok || err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("reading the gzip resource: %q (%v)", res.Text, err)
	}
	rt.Close() // writes what is queued for the cache
	cache, err := catalog.ReadCache(filepath.Join(dir, catalog.CacheFileName))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range cache.Servers["every"].Resources {
		found = found || r.URI == "demo://resource/session/hello.txt.gz"
	}
	if !found {
		t.Fatalf("the cache lacks the new resource: %+v", cache.Servers["every"].Resources)
	}
}

// settings.output changes the output guard's limits: text bytes, lines
// and the details bound (against the test server's big and environ tools).
func TestOutputLimitsFromSettings(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	f := &config.File{MCPServers: map[string]config.Server{"s": selfServer(t, "")},
		Settings: config.Settings{Output: &config.OutputLimits{MaxTextBytes: n(1000), MaxLines: n(3), MaxDetailsBytes: n(4096)}}}
	r := newRigFile(t, f)
	res := r.exec(r.ctx, `{"tool":"big","args":{"bytes":2000}}`)
	if !strings.Contains(res.Text, "[Output truncated: showing 1000 of 2000 bytes, 1 of 1 lines.]") || res.Details["fullResultPath"] == nil {
		t.Fatalf("2000 bytes over a 1000-byte limit: %.200q", res.Text)
	}
	if _, raw := res.Details["result"].(json.RawMessage); !raw {
		t.Fatalf("a result under the 4096-byte details limit is not in details: %v", res.Details["result"])
	}
	if res := r.exec(r.ctx, `{"tool":"big","args":{"bytes":5000}}`); res.Details["result"].(map[string]any)["omitted"] != true {
		t.Fatalf("details over the 4096-byte limit: %v", res.Details["result"])
	}
	res = r.exec(r.ctx, `{"tool":"environ"}`)
	if !strings.Contains(res.Text, "bytes, 3 of ") || strings.Count(res.Text, "\n") != 5 {
		t.Fatalf("lines over a 3-line limit:\n%s", res.Text)
	}
	if res := r.exec(r.ctx, `{"tool":"big","args":{"bytes":999}}`); res.Details["fullResultPath"] != nil || len(res.Text) != 999 {
		t.Fatalf("999 bytes were cut: %.100q", res.Text)
	}
}
