//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/remote"
)

// netns is a network namespace joined to this one by a veth pair: this
// side has host, the namespace side peer, both on a /30 of their own.
type netns struct {
	name, here, there string // the namespace; the veth ends (here: this namespace)
	host, peer        string // their addresses
}

// newNetns makes a namespace and its veth pair, or skips the test saying
// why it cannot; a cleanup removes both.
func newNetns(t *testing.T, n int) netns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the partition test makes network namespaces: it needs root (run as root, e.g. in CI's container)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the partition test needs the ip command (iproute2)")
	}
	tag := fmt.Sprintf("%d%d", os.Getpid()%100000, n)
	ns := netns{name: "mcprt-" + tag, here: "mcp" + tag + "a", there: "mcp" + tag + "b",
		host: fmt.Sprintf("10.231.%d.1", n), peer: fmt.Sprintf("10.231.%d.2", n)}
	run := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("netns", "add", ns.name); err != nil {
		t.Skipf("cannot make a network namespace here: %v", err)
	}
	t.Cleanup(func() { _ = run("netns", "del", ns.name) })
	if err := run("link", "add", ns.here, "type", "veth", "peer", "name", ns.there); err != nil {
		t.Skipf("cannot make a veth pair here: %v", err)
	}
	t.Cleanup(func() { _ = run("link", "del", ns.here) })
	for _, args := range [][]string{
		{"link", "set", ns.there, "netns", ns.name},
		{"addr", "add", ns.host + "/30", "dev", ns.here},
		{"link", "set", ns.here, "up"},
		{"netns", "exec", ns.name, "ip", "addr", "add", ns.peer + "/30", "dev", ns.there},
		{"netns", "exec", ns.name, "ip", "link", "set", ns.there, "up"},
		{"netns", "exec", ns.name, "ip", "link", "set", "lo", "up"},
	} {
		if err := run(args...); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// cut partitions the namespace away: both ends of the veth go down, so
// packets are lost and no connection is told it ended.
func (ns netns) cut(t *testing.T) {
	t.Helper()
	for _, args := range [][]string{{"link", "set", ns.here, "down"}, {"netns", "exec", ns.name, "ip", "link", "set", ns.there, "down"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
}

// TestSharedPartition: a session in another network namespace is cut off
// from its member during a call. The member, hearing no heartbeat, ends
// the session within its session timeout: the call is cancelled on the
// server and its lease returns (seen from a session of this namespace).
// The session, hearing nothing from the member, fails its call once
// within the same bound.
func TestSharedPartition(t *testing.T) {
	t.Parallel()
	ns := newNetns(t, 1+os.Getpid()%100)
	cancelLog := filepath.Join(t.TempDir(), "cancel.log")
	env := testenv.TestServerEnv("--stdio")
	env[ts.EnvCancelLog] = cancelLog
	m := startMemberWith(t, nil, map[string]any{"ts": map[string]any{"command": testenv.Self(t), "env": env}},
		map[string]string{envListen: ns.host + ":0"})
	ctx := testCtx(t)
	probe := attach(t, m, nil)

	_, child := testenv.StartSelfUnder(t, []string{"ip", "netns", "exec", ns.name},
		map[string]string{envAttachAddr: m.addr, remote.EnvTokenDir: m.tokens, envListen: ns.peer + ":0"})
	poll(ctx, t, "the partitioned session's call in flight", func() bool { return tsStatus(t, probe).Leases == 1 })
	ns.cut(t)

	poll(ctx, t, "the member to end the silent session (its lease returns)", func() bool { return tsStatus(t, probe).Leases == 0 })
	poll(ctx, t, "the call cancelled on the server", func() bool {
		b, _ := os.ReadFile(cancelLog)
		return strings.Contains(string(b), "cancelled")
	})
	poll(ctx, t, "the session to fail its call", func() bool { return strings.Contains(child.Output(), "hang returned:") })
	out := child.Output()
	if n := strings.Count(out, "hang returned:"); n != 1 || !strings.Contains(out, "stopped answering") || !strings.Contains(out, m.addr) {
		t.Errorf("the partitioned session's call: %d answers, output:\n%s\nwant one, saying the member at %s stopped answering", n, out, m.addr)
	}
	wantOK(t, mcpCall(ctx, t, probe, `{"tool":"echo","args":{"message":"after"}}`), "echo: after")
}

// TestSharedPartitionedPeer: member B forwards a session's call to member
// A, which is in another network namespace; A is cut off during the
// call. B, hearing nothing from A, fails the call once within A's session
// timeout, naming A; a later call to A's server fails at once saying A
// cannot be reached; B's own server keeps working.
func TestSharedPartitionedPeer(t *testing.T) {
	t.Parallel()
	ns := newNetns(t, 101+os.Getpid()%100)
	tokens := filepath.Join(t.TempDir(), "tokens-a")
	cfg := filepath.Join(t.TempDir(), "a.json")
	writeConfig(t, cfg, testServers(t, "ts"))
	ct := clusterTokenFile(t)
	addrA, _ := testenv.StartSelfUnder(t, []string{"ip", "netns", "exec", ns.name},
		map[string]string{envServeConfig: cfg, remote.EnvTokenDir: tokens, envListen: ns.peer + ":0", envCluster: ct})
	a := member{addr: addrA, tokens: tokens}
	b := startMemberWith(t, nil,
		testServers(t, "local"),
		map[string]string{envServePeer: a.addr, envListen: ns.host + ":0", envCluster: ct})
	ctx := testCtx(t)
	s := attach(t, b, nil)
	poll(ctx, t, "B to have A in its membership", func() bool { return slices.Contains(s.Servers(), "ts") })
	wantOK(t, mcpCall(ctx, t, s, `{"server":"ts","tool":"echo","args":{"message":"via b"}}`), "echo: via b")

	done := make(chan string, 2)
	go func() { done <- mcpCall(ctx, t, s, `{"server":"ts","tool":"hang","args":{}}`).Text }()
	poll(ctx, t, "the forwarded call in flight on A", func() bool { return tsStatus(t, s).Leases == 1 })
	ns.cut(t)
	var text string
	select {
	case text = <-done:
	case <-ctx.Done():
		t.Fatal("the forwarded call was not failed after A was cut off")
	}
	if !strings.Contains(text, "stopped answering") || !strings.Contains(text, a.addr) {
		t.Errorf("the forwarded call failed with %q; want A (%s) stopped answering", text, a.addr)
	}
	select {
	case extra := <-done:
		t.Fatalf("a second answer to one call: %s", extra)
	default:
	}
	if res := mcpCall(ctx, t, s, `{"server":"ts","tool":"echo","args":{"message":"x"}}`); !res.IsError || !strings.Contains(res.Text, "cannot be reached") {
		t.Errorf("a call to A's server after the partition: %s; want it cannot be reached", res.Text)
	}
	wantOK(t, mcpCall(ctx, t, s, `{"server":"local","tool":"echo","args":{"message":"still"}}`), "echo: still")
}

func writeConfig(t *testing.T, path string, servers map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
