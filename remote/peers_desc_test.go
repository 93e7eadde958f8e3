package remote

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// mcpDescription is the session's `mcp` tool's description.
func mcpDescription(t *testing.T, s *Session) string {
	t.Helper()
	tool, ok := s.Tool("mcp")
	if !ok {
		t.Fatal("the session has no mcp tool")
	}
	return tool.Description
}

// waitSignal waits for a signal on ch (a WatchTools channel).
func waitSignal(ctx context.Context, t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatalf("no WatchTools signal: %s", what)
	}
}

// The `mcp` tool's description through a member that runs no servers
// lists the servers the other live members offer, marked as theirs: when
// a member joins, the session's WatchTools signals and the description
// names its server (not listed yet); once a call had it listed there, the
// description counts its tools; when the member leaves, it signals again
// and the server is gone from the description.
func TestMCPDescriptionListsPeersServers(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	b := newRig(t, nil, ServeOptions{ClusterTokenFile: ct})
	ctx := testkit.Ctx(t)
	s := b.attach(t, AttachOptions{})
	if d := mcpDescription(t, s); strings.Contains(d, "Servers:") {
		t.Fatalf("description on a member alone with no servers: %q, want no servers", d)
	}
	changed, stop := s.WatchTools()
	defer stop()

	a := newRig(t, map[string]config.Server{"one": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: b.srv.Addr()}}})
	testkit.Poll(ctx, t, "a and b to have each other", func() bool { return len(liveAddrs(a)) == 1 && len(liveAddrs(b)) == 1 })
	waitSignal(ctx, t, changed, "a joined")
	want := "- one (tools not listed yet, on the member at " + a.srv.Addr() + ")"
	testkit.Poll(ctx, t, "the description to name a's server", func() bool { return strings.Contains(mcpDescription(t, s), want) })

	if res := mcpOn(ctx, t, s, `{"tool":"echo","args":{"message":"x"}}`); res.IsError {
		t.Fatalf("a call by the peer's tool's name alone: %q", res.Text)
	}
	d := mcpDescription(t, s)
	if !strings.Contains(d, "- one (") || !strings.Contains(d, " tools, on the member at "+a.srv.Addr()+")") || strings.Contains(d, "not listed yet") {
		t.Fatalf("description once a's server was listed: %q, want its tools counted", d)
	}

	for len(changed) > 0 {
		<-changed
	}
	_ = a.srv.Close()
	waitSignal(ctx, t, changed, "a left")
	testkit.Poll(ctx, t, "a's server to leave the description", func() bool { return !strings.Contains(mcpDescription(t, s), "- one (") })
}
