//go:build unix

package e2e

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
)

// TestSharedTwoMembers: member B names member A as a peer. A session on B
// reaches A's server by name (the mcp tool, the typed API, its status)
// and B's own; when A dies, the session's call in flight on A's server
// fails once with an error naming A, later calls to it fail at once
// saying A cannot be reached, and B's own server keeps working.
func TestSharedTwoMembers(t *testing.T) {
	t.Parallel()
	a := startMember(t, nil) // runs "ts"
	b := startMemberWith(t, nil,
		map[string]any{"local": map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio")}},
		map[string]string{envServePeer: a.addr + " " + a.tokenFile(t)})
	ctx := testCtx(t)
	s := attach(t, b, nil)

	if got := s.Servers(); !slices.Contains(got, "ts") || !slices.Contains(got, "local") {
		t.Fatalf("servers through B: %v, want B's (local) and A's (ts)", got)
	}
	wantOK(t, mcpCall(ctx, t, s, `{"server":"ts","tool":"echo","args":{"message":"on a"}}`), "echo: on a")
	wantOK(t, mcpCall(ctx, t, s, `{"server":"local","tool":"echo","args":{"message":"on b"}}`), "echo: on b")
	res, err := s.CallTool(ctx, "ts", "add", map[string]any{"a": 2, "b": 3})
	if err != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "5") {
		t.Fatalf("typed call to A's server through B: %+v, %v", res, err)
	}

	done := make(chan mcprt.Result, 2)
	go func() { done <- mcpCall(ctx, t, s, `{"server":"ts","tool":"hang","args":{}}`) }()
	poll(ctx, t, "the hang call in flight on A", func() bool { return tsStatus(t, s).Leases == 1 })
	if err := syscall.Kill(-a.proc.Cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var r mcprt.Result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the call in flight on A was not failed after A died")
	}
	wantError(t, r, messages.KindDisconnected.Code(), "")
	if !strings.Contains(r.Text, a.addr) {
		t.Errorf("error %q does not name the member that died (%s)", r.Text, a.addr)
	}
	select {
	case extra := <-done:
		t.Fatalf("a second answer to one call: %+v", extra)
	default:
	}
	_, err = s.CallTool(ctx, "ts", "echo", map[string]any{"message": "x"})
	if !errors.Is(err, mcprt.ErrDisconnected) || !strings.Contains(err.Error(), "cannot be reached") || !strings.Contains(err.Error(), a.addr) {
		t.Errorf("a call to A's server after A died: %v, want disconnected naming A at once", err)
	}
	wantOK(t, mcpCall(ctx, t, s, `{"server":"local","tool":"echo","args":{"message":"still"}}`), "echo: still")
}
