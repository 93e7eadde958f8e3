package remote

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// mcpOn runs the session's `mcp` tool with args.
func mcpOn(ctx context.Context, t *testing.T, s *Session, args string) mcprt.Result {
	t.Helper()
	tool, ok := s.Tool("mcp")
	if !ok {
		t.Fatal("the session has no mcp tool")
	}
	return tool.Execute(ctx, json.RawMessage(args))
}

// searchHas reports whether a search result's matches hold server's tool.
func searchHas(res mcprt.Result, server, tool string) bool {
	b, _ := json.Marshal(res.Details["matches"])
	var ms []struct{ Server, Tool string }
	_ = json.Unmarshal(b, &ms)
	return slices.ContainsFunc(ms, func(m struct{ Server, Tool string }) bool { return m.Server == server && m.Tool == tool })
}

// A session on a member that runs no servers uses the `mcp` tool as if
// the other member's server ran there: a search names the peer's server
// while it is not listed yet; a call by the tool's name alone has it
// listed there and is forwarded; search finds its tools marked with its
// name, describe shows one. Once the peer is gone, search no longer
// offers its tools and says why, and a call by name alone fails at once
// naming the peer's server and member.
func TestMCPToolSeesPeersServers(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	a := newRig(t, map[string]config.Server{"one": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct})
	b := newRig(t, nil, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: a.srv.Addr()}}})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "a and b to have each other", func() bool { return len(liveAddrs(a)) == 1 && len(liveAddrs(b)) == 1 })
	s := b.attach(t, AttachOptions{})

	res := mcpOn(ctx, t, s, `{"search":"echo"}`)
	if res.IsError || !strings.Contains(res.Text, "Not listed yet") || !strings.Contains(res.Text, "one") {
		t.Fatalf("search before the peer's server was listed: %q, want it named as not listed yet", res.Text)
	}

	res = mcpOn(ctx, t, s, `{"tool":"echo","args":{"message":"through b"}}`)
	if res.IsError || !strings.Contains(res.Text, "echo: through b") {
		t.Fatalf("a call by the peer's tool's name alone: %q", res.Text)
	}

	res = mcpOn(ctx, t, s, `{"search":"echo message"}`)
	if res.IsError || !searchHas(res, "one", "echo") || !strings.Contains(res.Text, "- echo (one)") {
		t.Fatalf("search through b: %q %v, want a's echo marked with its server", res.Text, res.Details["matches"])
	}
	// The same search on a ranks the same tools the same way.
	own := a.rt.Tools()[0].Execute(ctx, json.RawMessage(`{"search":"echo message"}`))
	if own.Text != res.Text {
		t.Errorf("search through b:\n%s\nsearch on a:\n%s\nwant the same", res.Text, own.Text)
	}

	res = mcpOn(ctx, t, s, `{"describe":"add"}`)
	if res.IsError || !strings.Contains(res.Text, "Server: one") || !strings.Contains(res.Text, "First addend") || res.Details["inputSchema"] == nil {
		t.Fatalf("describe through b: %q", res.Text)
	}

	res = mcpOn(ctx, t, s, `{"instructions":"one"}`)
	if res.IsError || res.Details["server"] != "one" {
		t.Fatalf("instructions of a's server through b: %q", res.Text)
	}

	// a stops without a word (as if killed).
	_ = a.srv.member.Shutdown(false)
	_ = a.srv.Close()
	res = mcpOn(ctx, t, s, `{"search":"echo message"}`)
	if searchHas(res, "one", "echo") || !strings.Contains(res.Text, "Not shown: the tools of one on the member at "+a.srv.Addr()) {
		t.Fatalf("search after a died: %q, want a's tools left out, saying so", res.Text)
	}
	res = mcpOn(ctx, t, s, `{"tool":"echo","args":{"message":"x"}}`)
	if !res.IsError || !strings.Contains(res.Text, "one on the member at "+a.srv.Addr()) {
		t.Fatalf("a call by name alone after a died: %q, want an error naming a's server and a", res.Text)
	}
}

// A tool name two members' servers answer to is ambiguous as it would be
// if both ran here; a name that is one server's alone is forwarded.
func TestMCPToolAmbiguousAcrossMembers(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	a := newRig(t, map[string]config.Server{"one": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct})
	b := newRig(t, map[string]config.Server{"two": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: a.srv.Addr()}}})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "a and b to have each other", func() bool { return len(liveAddrs(a)) == 1 && len(liveAddrs(b)) == 1 })
	s := b.attach(t, AttachOptions{})

	res := mcpOn(ctx, t, s, `{"tool":"echo","args":{"message":"x"}}`)
	if res.ErrorCode() != "ambiguous_tool" || !strings.Contains(res.Text, "one_echo") || !strings.Contains(res.Text, "two_echo") {
		t.Fatalf("echo through b with echo on a and on b: %q, want ambiguous naming one_echo and two_echo", res.Text)
	}
	res = mcpOn(ctx, t, s, `{"tool":"one_echo","args":{"message":"on a"}}`)
	if res.IsError || !strings.Contains(res.Text, "echo: on a") {
		t.Fatalf("one_echo through b: %q", res.Text)
	}
	res = mcpOn(ctx, t, s, `{"tool":"two_echo","args":{"message":"on b"}}`)
	if res.IsError || !strings.Contains(res.Text, "echo: on b") {
		t.Fatalf("two_echo through b: %q", res.Text)
	}
}

// A live member that never answers is left out of a search after the
// bound, with a note naming its servers: it never holds the search up.
func TestMCPToolLeavesOutSilentMember(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	r := newRig(t, nil, ServeOptions{ClusterTokenFile: ct, MemberTimeout: time.Hour})
	ctx := testkit.Ctx(t)
	// A member that takes connections and never says a word.
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hole.Close() })
	r.srv.member.heardView(&viewMsg{From: memberInfo{ID: "silent", Addr: hole.Addr().String(), Servers: []string{"stolen"}, Token: "its-token"}})
	testkit.Poll(ctx, t, "the silent member to join", func() bool { return slices.Contains(liveAddrs(r), hole.Addr().String()) })
	s := r.attach(t, AttachOptions{})
	res := mcpOn(ctx, t, s, `{"search":"echo"}`)
	want := "the tools of stolen on the member at " + hole.Addr().String() + ", which cannot be reached now (it did not answer within 2s)"
	if !strings.Contains(res.Text, want) {
		t.Fatalf("search with a silent member: %q, want it left out: %q", res.Text, want)
	}
	// The status does not wait for it either: its server is failed,
	// saying why, and the other answers come without it.
	var stolen mcprt.ServerStatus
	for _, st := range s.Status().Servers {
		if st.Name == "stolen" {
			stolen = st
		}
	}
	if stolen.Status != "failed" || stolen.Member != hole.Addr().String() || !strings.Contains(stolen.LastError, "did not answer within 2s") {
		t.Errorf("the silent member's server in the status: %+v", stolen)
	}
	if res := mcpOn(ctx, t, s, `{}`); !strings.Contains(res.Text, "stolen") || !strings.Contains(res.Text, hole.Addr().String()) {
		t.Errorf("the mcp tool's status with a silent member: %q", res.Text)
	}
	if names := s.Servers(); slices.Contains(names, "stolen") {
		t.Errorf("servers named by a member that never answered: %v", names)
	}
}

// BenchmarkCallThroughPeer is an `mcp` call of the other member's echo
// through a member that runs no servers: by the tool's name alone (which
// first asks the other member whether its catalog changed) and naming the
// server (which does not).
// go test ./remote -run '^$' -bench CallThroughPeer -benchtime 2000x
func BenchmarkCallThroughPeer(b *testing.B) {
	ct := filepath.Join(b.TempDir(), "cluster.token")
	a := newRig(b, map[string]config.Server{"one": testServer(b, nil)}, ServeOptions{ClusterTokenFile: ct})
	m := newRig(b, nil, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: a.srv.Addr()}}})
	ctx := context.Background()
	testkit.Poll(testkit.Ctx(b), b, "a and m to have each other", func() bool { return len(liveAddrs(m)) == 1 && len(liveAddrs(a)) == 1 })
	s, err := Attach(ctx, m.srv.Addr(), AttachOptions{TokenFile: m.srv.TokenFile()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tool, _ := s.Tool("mcp")
	for _, bc := range []struct{ name, args string }{
		{"byName", `{"tool":"echo","args":{"message":"x"}}`},
		{"naming", `{"server":"one","tool":"echo","args":{"message":"x"}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if res := tool.Execute(ctx, json.RawMessage(bc.args)); res.IsError {
				b.Fatal(res.Text)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if res := tool.Execute(ctx, json.RawMessage(bc.args)); res.IsError {
					b.Fatal(res.Text)
				}
			}
		})
	}
}
