//go:build unix

package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt"
)

// TestSharedServerRunsWhereItCan: member A configures "ts" with a command
// that does not exist, member B a working "ts", member C no ts. A session
// attached to A calls ts: it fails on A, so it runs on B, and A's status
// shows ts running on B, naming B; later calls go to B at once. B killed
// (SIGKILL): the session's next ts calls fail with errors naming what
// failed (B, then A's own failure and B); C, once its membership dropped
// B, finds no member offering ts (A's view does not offer it); A's status reports ts failed with both reasons.
func TestSharedServerRunsWhereItCan(t *testing.T) {
	t.Parallel()
	ct := clusterTokenFile(t)
	a := startMemberWith(t, nil, map[string]any{"ts": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-command")}},
		map[string]string{envCluster: ct})
	b := startMemberWith(t, nil, testServers(t, "ts", "b-only"),
		map[string]string{envCluster: ct, envServePeer: a.addr})
	c := startMemberWith(t, nil, testServers(t, "c-only"), map[string]string{envCluster: ct, envServePeer: a.addr})
	ctx := testCtx(t)
	s, sc := attach(t, a, nil), attach(t, c, nil)
	poll(ctx, t, "A to have B in its membership", func() bool { return slices.Contains(s.Servers(), "b-only") })
	poll(ctx, t, "C to have B and A", func() bool { return slices.Contains(sc.Servers(), "b-only") && slices.Contains(sc.Servers(), "ts") })

	wantOK(t, mcpCall(ctx, t, s, `{"server":"ts","tool":"echo","args":{"message":"via b"}}`), "echo: via b")
	statusOf := func(name string) mcprt.ServerStatus {
		for _, st := range s.Status().Servers {
			if st.Name == name {
				return st
			}
		}
		t.Fatalf("%s is not in A's status", name)
		return mcprt.ServerStatus{}
	}
	if st := statusOf("ts"); st.Status != "connected" || st.Member != b.addr {
		t.Errorf("ts in A's status: %+v; want connected on B (%s)", st, b.addr)
	}
	res, err := s.CallTool(ctx, "ts", "add", map[string]any{"a": 2, "b": 3})
	if err != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "5") {
		t.Fatalf("typed call to ts through A: %+v, %v", res, err)
	}

	if err := syscall.Kill(-b.proc.Cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The first call may meet B's link before its end is noticed (then
	// it fails with B gone: it may have reached B); the next one finds B
	// unreachable and answers with A's own failure, naming B too.
	for i, want := range [][]string{{b.addr}, {b.addr, "not found"}} {
		r := mcpCall(ctx, t, s, `{"server":"ts","tool":"echo","args":{"message":"x"}}`)
		for _, w := range want {
			if !r.IsError || !strings.Contains(r.Text, w) {
				t.Fatalf("ts call %d after B died: %q; want an error naming %q", i+1, r.Text, w)
			}
		}
	}
	// A's view does not offer ts: once C's membership dropped B, C knows
	// no member that offers it (A, which configures it, would answer with
	// its failure while C's view of it still offered ts).
	poll(ctx, t, "C to find no member offering ts once B left", func() bool {
		r := mcpCall(ctx, t, sc, `{"server":"ts","tool":"echo","args":{"message":"x"}}`)
		if !r.IsError {
			t.Fatalf("ts through C after B died: %q; want an error", r.Text)
		}
		return strings.Contains(r.Text, "left the cluster") && strings.Contains(r.Text, b.addr)
	})
	poll(ctx, t, "A's status to report ts failed on A and B", func() bool {
		st := statusOf("ts")
		return st.Status == "failed" && st.Member == "" && strings.Contains(st.LastError, "not found") && strings.Contains(st.LastError, b.addr)
	})
}
