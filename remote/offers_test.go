package remote

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// offerers are the members offering server in r's membership.
func offerers(r *rig, server string) []string { return addrsOf(r.srv.member.running(server)) }

// Member a configures "ts" with a command that does not exist, member b a
// working "ts". A session of a calls ts: it fails on a, so the call runs
// on b (the local failure is not the answer), a withdraws ts from its
// view (b sees only itself offering it), and the status through a shows
// ts running on b, naming b.
func TestClusterServerRunsWhereItCan(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	missing := config.Server{Command: filepath.Join(t.TempDir(), "no-such-command")}
	a := newRig(t, map[string]config.Server{"ts": missing}, ServeOptions{ClusterTokenFile: ct})
	b := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: a.srv.Addr()}}})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "a and b to have each other", func() bool { return len(liveAddrs(a)) == 1 && len(liveAddrs(b)) == 1 })

	s := a.attach(t, AttachOptions{})
	res, err := s.CallTool(ctx, "ts", "echo", map[string]any{"message": "via b"})
	if err != nil || res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "via b") {
		t.Fatalf("ts through a, which cannot run it: %+v, %v; want b's answer", res, err)
	}
	if n := leases(a, "ts"); n != 0 {
		t.Fatalf("a's own ts holds %d leases", n)
	}
	testkit.Poll(ctx, t, "a to withdraw ts from its view", func() bool {
		return slices.Equal(offerers(b, "ts"), nil) && slices.Equal(offerers(a, "ts"), []string{b.srv.Addr()})
	})
	// The mcp tool takes the same way.
	tool, _ := s.Tool(mcprt.MCPToolName)
	r := tool.Execute(ctx, json.RawMessage(`{"server":"ts","tool":"echo","args":{"message":"again"}}`))
	if r.IsError || !strings.Contains(r.Text, "again") {
		t.Fatalf("the mcp tool through a: %s", r.Text)
	}

	var st mcprt.ServerStatus
	for _, x := range s.Status().Servers {
		if x.Name == "ts" {
			st = x
		}
	}
	if st.Status != "connected" || st.Member != b.srv.Addr() {
		t.Errorf("ts in a's status: %+v; want connected on %s", st, b.srv.Addr())
	}
	for _, x := range s.ServerStatuses() {
		if x.Name == "ts" && (x.Member != b.srv.Addr() || x.State.String() != "connected") {
			t.Errorf("ts in a's server statuses: %+v; want connected on %s", x, b.srv.Addr())
		}
	}
}

// A server that failed comes back: a's "ts" command is missing until the
// test makes it, and b configures no ts. A session's call fails on a (no
// other member runs it) with the real reason and a withdraws ts; once
// the command exists, a's own retry connects it and a offers ts again,
// without any session asking.
func TestClusterServerComesBack(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	cmd := filepath.Join(t.TempDir(), "ts-later")
	later := testServer(t, nil)
	later.Command = cmd
	a := newRig(t, map[string]config.Server{"ts": later}, ServeOptions{ClusterTokenFile: ct, ServerRetry: 50 * time.Millisecond})
	b := newRig(t, nil, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: a.srv.Addr()}}})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "b to see a offering ts (never tried)", func() bool { return slices.Equal(offerers(b, "ts"), []string{a.srv.Addr()}) })

	s := a.attach(t, AttachOptions{})
	_, err := s.CallTool(ctx, "ts", "echo", map[string]any{"message": "x"})
	if messages.KindOf(err) != messages.KindConnectFailed || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("ts while its command is missing: %v; want connect_failed, command not found", err)
	}
	testkit.Poll(ctx, t, "a to withdraw ts", func() bool { return len(offerers(b, "ts")) == 0 })

	if err := os.Symlink(testenv.Self(t), cmd); err != nil {
		t.Skipf("cannot make the command: %v", err)
	}
	testkit.Poll(ctx, t, "a to offer ts again after its own retry", func() bool { return slices.Equal(offerers(b, "ts"), []string{a.srv.Addr()}) })
	res, err := s.CallTool(ctx, "ts", "echo", map[string]any{"message": "back"})
	if err != nil || res.IsError {
		t.Fatalf("ts after it came back: %+v, %v", res, err)
	}
}

// A member forwarding a request passes over a member that offered the
// server but cannot run it: a (which has never tried its servers, so it
// offers them) fails at once, b runs it. c's session calls a server that
// c's membership orders a first; the call is answered by b, and a, whose
// run of the forwarded request failed, withdraws that server.
func TestClusterForwardPassesOverMemberThatCannotRun(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	missing, working := map[string]config.Server{}, map[string]config.Server{}
	for i := range 20 {
		name := "s" + strconv.Itoa(i)
		missing[name] = config.Server{Command: filepath.Join(t.TempDir(), "no-such-command")}
		working[name] = testServer(t, nil)
	}
	a := newRig(t, missing, ServeOptions{ClusterTokenFile: ct})
	seed := []Peer{{Addr: a.srv.Addr()}}
	b := newRig(t, working, ServeOptions{ClusterTokenFile: ct, Peers: seed})
	c := newRig(t, nil, ServeOptions{ClusterTokenFile: ct, Peers: seed})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "c to see a and b offering s0", func() bool { return len(offerers(c, "s0")) == 2 })
	server := ""
	for name := range missing {
		if got := offerers(c, name); len(got) == 2 && got[0] == a.srv.Addr() {
			server = name
		}
	}
	if server == "" {
		t.Fatal("a is ordered first for none of 20 servers")
	}
	s := c.attach(t, AttachOptions{})
	res, err := s.CallTool(ctx, server, "echo", map[string]any{"message": "from b"})
	if err != nil || res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "from b") {
		t.Fatalf("%s through c, a first in its order: %+v, %v; want b's answer", server, res, err)
	}
	testkit.Poll(ctx, t, "a to withdraw "+server, func() bool { return slices.Equal(offerers(c, server), []string{b.srv.Addr()}) })
	if got := offerers(c, "s0"); server != "s0" && len(got) != 2 {
		t.Errorf("a withdrew s0 too, which nobody asked for: %v", got)
	}
}

// A request's outcome never reached its server only for the connect
// kinds (supervisor.Unreached), whether it is an error or an mcp tool's
// error result; successes and tool errors did reach it.
func TestUnreachedOutcomes(t *testing.T) {
	tool := &requestMsg{Op: opTool, Name: mcprt.MCPToolName}
	typed := &requestMsg{Op: opCallTool}
	result := func(r mcprt.Result) json.RawMessage {
		b, ok := appendResult(nil, r)
		if !ok {
			t.Fatal("appendResult refused")
		}
		return b
	}
	failed := func(code string) json.RawMessage {
		return result(mcprt.Result{Text: "Error: x", IsError: true, Details: map[string]any{"error": code, "message": "x"}})
	}
	// As json.Marshal writes a result with images (isError not last).
	marshalled := json.RawMessage(`{"text":"Error: x","details":{"error":"connect_failed"},"isError":true,"images":[]}`)
	for _, tc := range []struct {
		name string
		m    *requestMsg
		b    json.RawMessage
		err  error
		want bool
	}{
		{"a success", tool, result(mcprt.Result{Text: `"isError":true`}), nil, false},
		{"connect_failed result", tool, failed("connect_failed"), nil, true},
		{"server_backoff result", tool, failed("server_backoff"), nil, true},
		{"a marshalled error result", tool, marshalled, nil, true},
		{"tool_error result", tool, failed("tool_error"), nil, false},
		{"disconnected result", tool, failed("disconnected"), nil, false},
		{"a typed call's connect failure", typed, nil, messages.Errorf(messages.KindConnectFailed, "ts", "x"), true},
		{"a typed call's timeout", typed, nil, messages.Errorf(messages.KindRequestTimeout, "ts", "x"), false},
		{"a typed call's result is not looked into", typed, failed("connect_failed"), nil, false},
	} {
		if got := unreached(tc.m, tc.b, tc.err); got != tc.want {
			t.Errorf("%s: unreached %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A typed subscription and a protocol session of a server this member
// configures but cannot run go to a member that runs it, as a call does:
// a's "ev" command is missing, b's works; once a call has found that out
// (a withdraws ev), a's session subscribes and opens a protocol session,
// both served by b.
func TestClusterTypedAndProtocolGoWhereTheServerRuns(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	missing := config.Server{Command: filepath.Join(t.TempDir(), "no-such-command")}
	a := newRig(t, map[string]config.Server{"ev": missing}, ServeOptions{ClusterTokenFile: ct})
	b := newRig(t, map[string]config.Server{"ev": evServer(t)}, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: a.srv.Addr()}}})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "a and b to have each other", func() bool { return len(liveAddrs(a)) == 1 && len(liveAddrs(b)) == 1 })
	s := a.attach(t, AttachOptions{})
	if n := streamsOf(ctx, t, s); n != 0 {
		t.Fatalf("%d streams before any subscription", n)
	}
	testkit.Poll(ctx, t, "a to withdraw ev", func() bool { return !a.srv.offers.offered("ev") })

	var rec typedRec
	sub, err := s.Subscribe(ctx, "ev", testserver.EventTest, map[string]any{"tag": "x"}, rec.handle)
	if err != nil {
		t.Fatalf("a typed subscription through a, which cannot run ev: %v; want b's", err)
	}
	defer sub.Stop()
	emitN(ctx, t, s, "x", 1, 3)
	testkit.Poll(ctx, t, "the 3 events from b's ev", func() bool { return len(rec.ns()) >= 3 })
	if got := joined(rec.ns()); got != seq(1, 3) {
		t.Fatalf("events %s", got)
	}

	p := mustRegister(t, s)
	defer p.Dispose()
	ps, err := p.Connect(ctx, "ev")
	if err != nil {
		t.Fatalf("a protocol session through a, which cannot run ev: %v; want b's", err)
	}
	defer ps.Close()
	if _, err := ps.Request(ctx, testserver.MethodExampleList, json.RawMessage(`{}`)); err != nil {
		t.Fatalf("a request of the protocol session: %v", err)
	}
	if n := leases(a, "ev"); n != 0 {
		t.Errorf("a's own ev holds %d leases", n)
	}
}
