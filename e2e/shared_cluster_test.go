//go:build unix

package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt"
)

// TestSharedCluster: members A and B both configure "ts" (and one server
// of their own each), C configures only "local"; B and C name A as their
// seed. A session on C reaches every member's servers by name (C found B
// through A). A member D that joins at run time, naming only B, is found
// and used without a restart; a would-be member E with another cluster
// token, naming A, never joins. When the member running the session's
// "ts" call is killed, the call fails once naming it, the next "ts" call
// works through the other member, and the dead member's own server is
// reported failed and fails at once naming it, before and after the
// membership drops it.
func TestSharedCluster(t *testing.T) {
	t.Parallel()
	ct := clusterTokenFile(t)
	a := startMemberWith(t, nil, testServers(t, "ts", "a-only"), map[string]string{envCluster: ct})
	b := startMemberWith(t, nil, testServers(t, "ts", "b-only"), map[string]string{envCluster: ct, envServePeer: a.addr})
	c := startMemberWith(t, nil, testServers(t, "local"), map[string]string{envCluster: ct, envServePeer: a.addr})
	ctx := testCtx(t)
	s := attach(t, c, nil)
	has := func(names ...string) func() bool {
		return func() bool {
			got := s.Servers()
			for _, n := range names {
				if !slices.Contains(got, n) {
					return false
				}
			}
			return true
		}
	}
	poll(ctx, t, "C to have A and B (B through A)", has("a-only", "b-only", "ts", "local"))
	wantOK(t, mcpCall(ctx, t, s, `{"server":"b-only","tool":"echo","args":{"message":"on b"}}`), "echo: on b")

	// E has a cluster token of its own: A refuses it. D, started after E,
	// joins through B.
	startMemberWith(t, nil, testServers(t, "e-only"), map[string]string{envCluster: clusterTokenFile(t), envServePeer: a.addr})
	startMemberWith(t, nil, testServers(t, "d-only"), map[string]string{envCluster: ct, envServePeer: b.addr})
	poll(ctx, t, "C to find D, which named only B", has("d-only"))
	wantOK(t, mcpCall(ctx, t, s, `{"server":"d-only","tool":"echo","args":{"message":"on d"}}`), "echo: on d")
	if got := s.Servers(); slices.Contains(got, "e-only") {
		t.Errorf("a member without the cluster token joined: C lists %v", got)
	}

	// The ts call runs on A or B: the victim is the one that has its lease.
	sa, sb := attach(t, a, nil), attach(t, b, nil)
	done := make(chan mcprt.Result, 2)
	go func() { done <- mcpCall(ctx, t, s, `{"server":"ts","tool":"hang","args":{}}`) }()
	poll(ctx, t, "the hang call in flight on A or B", func() bool { return tsStatus(t, sa).Leases+tsStatus(t, sb).Leases == 1 })
	victim, own := a, "a-only"
	if tsStatus(t, sb).Leases == 1 {
		victim, own = b, "b-only"
	}
	killCallee(ctx, t, done, victim)
	wantOK(t, mcpCall(ctx, t, s, `{"server":"ts","tool":"echo","args":{"message":"after"}}`), "echo: after")

	ownFails := func(left bool) bool {
		res := mcpCall(ctx, t, s, `{"server":"`+own+`","tool":"echo","args":{"message":"x"}}`)
		if !res.IsError || !strings.Contains(res.Text, "cannot be reached") || !strings.Contains(res.Text, victim.addr) {
			t.Fatalf("a call to the dead member's own server: %s; want it cannot be reached, naming %s", res.Text, victim.addr)
		}
		return !left || strings.Contains(res.Text, "left the cluster")
	}
	ownFails(false)
	poll(ctx, t, "C's membership to drop the killed member", func() bool { return ownFails(true) })
	wantOK(t, mcpCall(ctx, t, s, `{"server":"ts","tool":"echo","args":{"message":"later"}}`), "echo: later")
	var st mcprt.ServerStatus
	for _, x := range s.Status().Servers {
		if x.Name == own {
			st = x
		}
	}
	if st.Status != "failed" || !strings.Contains(st.LastError, victim.addr) {
		t.Errorf("the dead member's server in C's status: %+v; want failed, naming %s", st, victim.addr)
	}
}
