package tools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// fakePeers offers another runtime's servers as a member would: that
// runtime's Exported, and its proxy tool for Forward.
type fakePeers struct {
	m *MCP

	mu sync.Mutex
	// forwarded is guarded by mu.
	forwarded []string
}

func (f *fakePeers) Servers(ctx context.Context, list bool) (uint64, []PeerServer, []string) {
	v, servers, _ := f.m.Exported(ctx, list, 0)
	for i := range servers {
		servers[i].Member = "127.0.0.1:1"
	}
	return v, servers, nil
}

func (f *fakePeers) Forward(ctx context.Context, server string, args json.RawMessage) Result {
	f.mu.Lock()
	f.forwarded = append(f.forwarded, server+" "+string(args))
	f.mu.Unlock()
	return f.m.Execute(ctx, args)
}

// Another runtime's servers join the view after this one's: a search
// reads as it would with every server here, a name both a local and a
// peer's server answer to is ambiguous, a peer's tool is called through
// Forward naming its server, and a server this runtime runs is never
// taken from the peer.
func TestPeersJoinTheView(t *testing.T) {
	here := newRig(t, []string{"near"}, nil)
	there := newRig(t, []string{"near", "far"}, nil)
	all := newRig(t, []string{"near", "far"}, nil)
	m := NewMCP(here.sys, Options{ResultDir: t.TempDir()})
	peers := &fakePeers{m: NewMCP(there.sys, Options{ResultDir: t.TempDir()})}
	m.SetPeers(peers)
	exec := func(args string) Result { return m.Execute(here.ctx, json.RawMessage(args)) }

	res := exec(`{"tool":"add","args":{"a":1,"b":2}}`)
	wantCode(t, res, "ambiguous_tool")
	if !strings.Contains(res.Text, "matches 2 tools") || !strings.Contains(res.Text, "near_add") || !strings.Contains(res.Text, "far_add") {
		t.Fatalf("add with near here and far there: %q, want near_add and far_add only", res.Text)
	}
	wantOK(t, exec(`{"tool":"far_add","args":{"a":1,"b":2}}`), "3")
	peers.mu.Lock()
	got := strings.Join(peers.forwarded, "\n")
	peers.mu.Unlock()
	if got != `far {"server":"far","tool":"add","args":{"a":1,"b":2}}` {
		t.Fatalf("forwarded: %s", got)
	}
	wantOK(t, exec(`{"tool":"near_add","args":{"a":2,"b":2}}`), "4")

	all.exec(`{"connect":"near"}`)
	all.exec(`{"connect":"far"}`)
	want := all.exec(`{"search":"sum of a and b"}`)
	if res := exec(`{"search":"sum of a and b"}`); res.Text != want.Text {
		t.Fatalf("search with far on a peer:\n%s\nwith every server here:\n%s", res.Text, want.Text)
	}
	if res := exec(`{"describe":"far_add"}`); res.IsError || !strings.Contains(res.Text, "Server: far") {
		t.Fatalf("describe far_add: %q", res.Text)
	}

	m.SetPeers(nil)
	wantCode(t, exec(`{"tool":"far_add","args":{"a":1,"b":2}}`), "tool_not_found")
}
