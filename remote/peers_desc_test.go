package remote

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
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

// The `mcp` tool's status mode ({}) through a member shows the other
// live members' servers too, each marked with its member, as the
// session's typed Status does; a member alone shows its own.
func TestMCPStatusShowsPeersServers(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	a := newRig(t, map[string]config.Server{"one": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct})
	b := newRig(t, map[string]config.Server{"two": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct})
	ctx := testkit.Ctx(t)
	s := b.attach(t, AttachOptions{})
	res := mcpOn(ctx, t, s, `{}`)
	if res.IsError || !strings.Contains(res.Text, "two") || strings.Contains(res.Text, "one") {
		t.Fatalf("status on b alone: %q, want b's server alone", res.Text)
	}

	c := newRig(t, nil, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: a.srv.Addr()}, {Addr: b.srv.Addr()}}})
	testkit.Poll(ctx, t, "a, b and c to have each other", func() bool {
		return len(liveAddrs(a)) == 2 && len(liveAddrs(b)) == 2 && len(liveAddrs(c)) == 2
	})
	if res := mcpOn(ctx, t, s, `{"server":"one","tool":"echo","args":{"message":"x"}}`); res.IsError {
		t.Fatalf("a call of a's echo through b: %q", res.Text)
	}
	res = mcpOn(ctx, t, s, `{}`)
	if res.IsError || !strings.Contains(res.Text, "✓ one (") || !strings.Contains(res.Text, "on the member at "+a.srv.Addr()) ||
		!strings.Contains(res.Text, "two (") || !strings.Contains(res.Text, "/2 servers connected") {
		t.Fatalf("status through b: %q, want b's two and a's one marked with a", res.Text)
	}
	b2, _ := json.Marshal(res.Details["servers"])
	var rows []struct{ Name, Member string }
	_ = json.Unmarshal(b2, &rows)
	for _, r := range rows {
		if want := map[string]string{"one": a.srv.Addr(), "two": ""}[r.Name]; r.Member != want {
			t.Errorf("status row %s: member %q, want %q", r.Name, r.Member, want)
		}
	}
	if len(rows) != 2 {
		t.Errorf("status rows: %+v, want one and two", rows)
	}
	// It reads as the session's typed status says.
	if st := s.Status(); len(st.Servers) != len(rows) {
		t.Errorf("typed status: %+v, the mcp tool's: %+v", st.Servers, rows)
	}
}

// A call by a tool's name alone of a tool of a server this member
// configures but has withdrawn (it failed here) goes to a member that
// offers the server, as a call naming the server does: a's ts is listed,
// then its command goes and it crashes; a call naming ts fails on a, which
// withdraws it, and echo by name alone through a is answered by b's ts.
func TestMCPCallByNameGoesWhereWithdrawnServerRuns(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	cmd := filepath.Join(t.TempDir(), "ts-for-now")
	if err := os.Symlink(testenv.Self(t), cmd); err != nil {
		t.Skipf("cannot make the command: %v", err)
	}
	forNow := testServer(t, nil)
	forNow.Command = cmd
	a := newRig(t, map[string]config.Server{"ts": forNow}, ServeOptions{ClusterTokenFile: ct, ServerRetry: time.Hour})
	b := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: a.srv.Addr()}}})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "a and b to have each other", func() bool { return len(liveAddrs(a)) == 1 && len(liveAddrs(b)) == 1 })
	s := a.attach(t, AttachOptions{})

	if res := mcpOn(ctx, t, s, `{"tool":"echo","args":{"message":"on a"}}`); res.IsError || !strings.Contains(res.Text, "echo: on a") {
		t.Fatalf("echo by name alone through a: %q", res.Text)
	}
	if err := os.Remove(cmd); err != nil {
		t.Fatal(err)
	}
	_ = mcpOn(ctx, t, s, `{"server":"ts","tool":"crash"}`)
	// A call naming ts fails here without reaching it (a withdraws it) and
	// is answered by b.
	if res := mcpOn(ctx, t, s, `{"server":"ts","tool":"echo","args":{"message":"naming"}}`); res.IsError || !strings.Contains(res.Text, "echo: naming") {
		t.Fatalf("echo naming ts through a once its command went: %q, want b's ts to answer", res.Text)
	}
	testkit.Poll(ctx, t, "a to withdraw ts", func() bool { return len(offerers(b, "ts")) == 0 })

	res := mcpOn(ctx, t, s, `{"tool":"echo","args":{"message":"by name"}}`)
	if res.IsError || !strings.Contains(res.Text, "echo: by name") {
		t.Fatalf("echo by name alone through a once a withdrew ts: %q, want b's ts to answer", res.Text)
	}
}
