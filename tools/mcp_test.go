package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// Status ({}) reads every server's state without connecting any of them.
func TestStatusNeverConnects(t *testing.T) {
	t.Parallel()
	r := newRig(t, []string{"a", "b"}, nil)
	res := r.exec(`{}`)
	if want := "MCP: 0/2 servers connected, 0 tools\n○ a (not connected)\n○ b (not connected)"; res.IsError || res.Text != want {
		t.Fatalf("status:\n%s\nwant:\n%s", res.Text, want)
	}
	r.exec(`null`)
	r.exec(``)
	for _, s := range []string{"a", "b"} {
		if d, _ := r.dialer.count(s, ""); d != 0 {
			t.Fatalf("status connected %s", s)
		}
	}
	if res := r.exec(`{"server":"a"}`); res.IsError {
		t.Fatalf("list a: %s", res.Text)
	}
	n := len(testserver.ToolNames())
	res = r.exec(`{}`)
	if want := "✓ a (" + strconv.Itoa(n) + " tools)\n○ b (not connected)"; !strings.HasSuffix(res.Text, want) || res.Details["connectedCount"] != 1 || res.Details["totalTools"] != n {
		t.Fatalf("status after listing a:\n%s\n%v", res.Text, res.Details)
	}
	if d, _ := r.dialer.count("b", ""); d != 0 {
		t.Fatal("status connected b")
	}
}

// An eager server lists its catalog as soon as it connects, once: status
// then shows its tools, and nothing else lists them again.
func TestEagerServerListsOnConnect(t *testing.T) {
	t.Parallel()
	r := newRig(t, []string{"e"}, nil, func(c *actors.ServerConfig) { c.Policy.Mode = supervisor.Eager })
	n := len(testserver.ToolNames())
	want := "MCP: 1/1 servers connected, " + strconv.Itoa(n) + " tools\n✓ e (" + strconv.Itoa(n) + " tools)"
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for r.exec(`{}`).Text != want {
		select {
		case <-tick.C:
		case <-r.ctx.Done():
			t.Fatalf("the eager server never showed its tools: %s", r.exec(`{}`).Text)
		}
	}
	wantOK(t, r.exec(`{"tool":"echo","args":{"message":"x"}}`), "echo: x")
	if _, lists := r.dialer.count("e", "tools/list"); lists != 1 {
		t.Fatalf("tools/list sent %d times, want once", lists)
	}
}

// Listing a server ({"server": "x"}) runs a live tools/list and follows its
// pagination to the end.
func TestListFollowsPagination(t *testing.T) {
	t.Parallel()
	r := newRig(t, []string{"paged"}, map[string]string{"paged": "--page-size 2 --extra-tools 5"})
	res := r.exec(`{"server":"paged"}`)
	want := len(testserver.ToolNames()) + 5
	if res.IsError || !strings.HasPrefix(res.Text, "paged ("+strconv.Itoa(want)+" tools):\n") || res.Details["count"] != want {
		t.Fatalf("list:\n%s", res.Text)
	}
	for _, name := range append(testserver.ToolNames(), "extra_000", "extra_004") {
		if !strings.Contains(res.Text, "\n- "+name+" - ") {
			t.Fatalf("list lacks %s:\n%s", name, res.Text)
		}
	}
	if _, pages := r.dialer.count("paged", "tools/list"); pages != (want+1)/2 {
		t.Fatalf("%d tools/list pages for %d tools of page size 2", pages, want)
	}
	wantCode(t, r.exec(`{"server":"nobody"}`), "server_not_found")
}

// A call takes its arguments as a JSON object or as a JSON string holding
// one; a tool's own error result is a tool_error.
func TestCallArgsObjectOrString(t *testing.T) {
	t.Parallel()
	r := newRig(t, []string{"x"}, nil)
	wantOK(t, r.exec(`{"tool":"echo","args":{"message":"object"}}`), "echo: object")
	wantOK(t, r.exec(`{"tool":"echo","args":"{\"message\":\"string\"}"}`), "echo: string")
	wantOK(t, r.exec(`{"tool":"add","args":" {\"a\":2,\"b\":3} "}`), "5")
	if res := r.exec(`{"tool":"cwd","args":""}`); res.IsError || !strings.HasPrefix(res.Text, "/") {
		t.Fatalf("empty args string: %q", res.Text)
	}
	res := r.exec(`{"tool":"fail"}`)
	wantCode(t, res, "tool_error")
	if res.Text != "Error: failed on purpose" || res.Details["server"] != "x" || res.Details["tool"] != "fail" {
		t.Fatalf("tool error: %q %v", res.Text, res.Details)
	}
	wantCode(t, r.exec(`{"args":{"message":"no tool"}}`), "invalid_args")
}

// Tool names resolve exactly, then with '-' and '_' alike, then with a
// server-name prefix; a name two servers offer is ambiguous until prefixed.
// Catalogs are listed once and listed again after list_changed.
func TestToolNameResolution(t *testing.T) {
	t.Parallel()
	r := newRig(t, []string{"alpha", "beta"}, map[string]string{"alpha": "--extra-tools 1"})
	wantOK(t, r.exec(`{"tool":"extra_000"}`), "ok")
	wantOK(t, r.exec(`{"tool":"extra-000"}`), "ok")
	res := r.exec(`{"tool":"echo","args":{"message":"?"}}`)
	wantCode(t, res, "ambiguous_tool")
	if !strings.Contains(res.Text, "alpha_echo, beta_echo") {
		t.Fatalf("ambiguity does not list the candidates: %q", res.Text)
	}
	wantCode(t, r.exec(`{"tool":"ECHO","args":{"message":"?"}}`), "ambiguous_tool")
	for _, name := range []string{"beta_echo", "beta-echo", "beta.echo", "beta__echo"} {
		wantOK(t, r.exec(`{"tool":"`+name+`","args":{"message":"b"}}`), "echo: b")
	}
	wantOK(t, r.exec(`{"tool":"alpha_add","args":{"a":1,"b":1}}`), "2")
	if _, calls := r.dialer.count("beta", "tools/call"); calls != 4 {
		t.Fatalf("beta got %d calls, want 4", calls)
	}
	if _, calls := r.dialer.count("alpha", "tools/call"); calls != 3 {
		t.Fatalf("alpha got %d calls, want 3", calls)
	}
	res = r.exec(`{"tool":"beta_extra_000"}`)
	wantCode(t, res, "tool_not_found")
	if !strings.Contains(res.Text, "did you mean") {
		t.Fatalf("no suggestion: %q", res.Text)
	}
	for _, s := range []string{"alpha", "beta"} {
		if _, lists := r.dialer.count(s, "tools/list"); lists != 1 {
			t.Fatalf("%s listed %d times, want once", s, lists)
		}
	}
	// beta says its tool list changed: a name the known catalogs do not
	// resolve lists beta again, and only beta.
	wantOK(t, r.exec(`{"tool":"beta_notify"}`), "ok")
	wantOK(t, r.exec(`{"tool":"alpha_echo","args":{"message":"a"}}`), "echo: a")
	wantCode(t, r.exec(`{"tool":"nowhere"}`), "tool_not_found")
	for s, want := range map[string]int{"alpha": 1, "beta": 2} {
		if _, lists := r.dialer.count(s, "tools/list"); lists != want {
			t.Fatalf("%s listed %d times after beta's list_changed, want %d", s, lists, want)
		}
	}
}

// A call whose name resolution waits for a server that never finishes
// starting returns aborted as soon as the caller gives up; meanwhile status
// shows the server connecting.
func TestResolutionWaitRespectsTheCaller(t *testing.T) {
	t.Parallel()
	r := newRig(t, []string{"stuck"}, map[string]string{"stuck": "--ignore-unknown"}, func(c *actors.ServerConfig) {
		c.Endpoint.ProtocolVersion = messages.Protocol20260728
	})
	ctx, cancel := context.WithCancel(r.ctx)
	ch := make(chan Result, 1)
	go func() { ch <- r.mcp.Execute(ctx, json.RawMessage(`{"tool":"echo"}`)) }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for r.sys.Status(r.ctx)[0].State != messages.StateConnecting {
		select {
		case <-tick.C:
		case <-r.ctx.Done():
			t.Fatal("the server never started connecting")
		}
	}
	if res := r.exec(`{}`); !strings.HasSuffix(res.Text, "\n… stuck (connecting)") {
		t.Fatalf("status while connecting: %q", res.Text)
	}
	cancel()
	select {
	case res := <-ch:
		wantCode(t, res, "aborted")
	case <-r.ctx.Done():
		t.Fatal("the call did not return when its caller gave up")
	}
}
