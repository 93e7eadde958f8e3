//go:build unix

package e2e

import (
	"strings"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/remote"
)

// TestSharedSetRoots: a session's SetRoots reaches server-everything
// through a member process: the member announces the change
// (notifications/roots/list_changed), the server asks again, and the
// question, put to the session, is answered with its new roots.
func TestSharedSetRoots(t *testing.T) {
	t.Parallel()
	js := testenv.EverythingJS(t)
	m := startMemberWith(t, nil, map[string]any{"every": map[string]any{"command": testenv.Node(t), "args": []string{js, "stdio"}}}, nil)
	ctx := testCtx(t)
	s, err := remote.Attach(ctx, m.addr, remote.AttachOptions{TokenFile: m.tokenFile(t),
		Client: mcprt.ClientHooks{Roots: []mcprt.Root{{URI: "file:///work/project"}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	roots := func() string {
		t.Helper()
		res := mcpCall(ctx, t, s, `{"server":"every","tool":"get-roots-list","args":{}}`)
		if res.IsError {
			t.Fatalf("get-roots-list: %s", res.Text)
		}
		return res.Text
	}
	poll(ctx, t, "the server to know the session's roots", func() bool { return strings.Contains(roots(), "file:///work/project") })
	s.SetRoots([]mcprt.Root{{URI: "file:///work/other", Name: "other"}})
	poll(ctx, t, "the server to see the new roots", func() bool {
		got := roots()
		return strings.Contains(got, "file:///work/other") && !strings.Contains(got, "file:///work/project")
	})
}
