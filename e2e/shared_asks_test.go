//go:build unix

package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/remote"
)

// sessionClient is a session's hooks: its own roots and its own answer
// to a name elicitation.
func sessionClient(root, name string) mcprt.ClientHooks {
	return mcprt.ClientHooks{
		Roots: []mcprt.Root{{URI: root}},
		Elicit: func(context.Context, mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
			return mcprt.ElicitAnswer{Action: mcprt.ElicitAccept, Content: map[string]any{"name": name}}, nil
		},
	}
}

// TestSharedQuestionsGoToTheCallingSession: a server's roots/list and
// elicitation during a session's call are answered by that session's
// hooks, not another's; a question no call caused (asked after the call
// returned) goes to the session whose call last named the server.
func TestSharedQuestionsGoToTheCallingSession(t *testing.T) {
	t.Parallel()
	m := startMember(t, map[string]any{"ask": map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio --client-requests")}})
	ctx := testCtx(t)
	attachWith := func(c mcprt.ClientHooks) *remote.Session {
		s, err := remote.Attach(ctx, m.addr, remote.AttachOptions{Client: c, TokenFile: m.tokenFile(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a := attachWith(sessionClient("file:///work/a", "Ada"))
	b := attachWith(sessionClient("file:///work/b", "Bob"))
	call := func(s *remote.Session, tool string) string {
		t.Helper()
		res := mcpCall(ctx, t, s, `{"server":"ask","tool":"`+tool+`","args":{}}`)
		if res.IsError {
			t.Fatalf("%s: %s", tool, res.Text)
		}
		return res.Text
	}
	for _, c := range []struct {
		s          *remote.Session
		root, name string
	}{{a, "file:///work/a", "accept Ada"}, {b, "file:///work/b", "accept Bob"}, {a, "file:///work/a", "accept Ada"}} {
		if got := call(c.s, ts.ToolAskRoots); got != c.root {
			t.Errorf("roots during the call: %q, want the calling session's %q", got, c.root)
		}
		if got, _, _ := strings.Cut(call(c.s, ts.ToolAskName), "\n"); got != c.name {
			t.Errorf("elicitation during the call: %q, want the calling session's %q", got, c.name)
		}
	}
	// After b's call returns, the server asks with no call in flight (or
	// during one of b's polls): b's, not a's, though a attached first.
	// (Polling from a would make a's poll the call in flight.)
	call(b, ts.ToolAskRootsLater)
	poll(ctx, t, "the later question's answer", func() bool {
		return call(b, ts.ToolLastRoots) != "<none>"
	})
	if got := call(b, ts.ToolLastRoots); got != "file:///work/b" {
		t.Errorf("a question no call caused went to %q; want the session whose call last named the server (b)", got)
	}
}
