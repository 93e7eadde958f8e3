//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/remote"
)

// The shared runtime (issue 21) with real processes: a serving member
// (this test binary re-executed as `runtime serve` would run: remote.Server
// over mcprt.Start), the test server as its stdio server, and sessions
// attached from this process and from child processes.

// member is a serving member process and its address.
type member struct {
	addr   string
	tokens string // the token directory
	proc   *testenv.Proc
}

// tokenFile is the member's token file.
func (m member) tokenFile(t *testing.T) string {
	t.Helper()
	f, err := remote.TokenFileIn(m.tokens, m.addr)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// testServers configures the test server over stdio under each of names.
func testServers(t *testing.T, names ...string) map[string]any {
	m := map[string]any{}
	for _, n := range names {
		m[n] = map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio")}
	}
	return m
}

// startMember writes a configuration with the test server over stdio
// (plus extra servers) and starts a member serving it. Token files go to a
// directory of the test (MCPRT_SHARED_DIR, set for this process too).
func startMember(t *testing.T, extra map[string]any) member {
	t.Helper()
	return startMemberWith(t, extra, nil, nil)
}

// startMemberWith is startMember with its own servers (nil: the test
// server as "ts") and extra environment.
func startMemberWith(t *testing.T, extra map[string]any, servers map[string]any, env map[string]string) member {
	t.Helper()
	dir := t.TempDir()
	if servers == nil {
		servers = testServers(t, "ts")
	}
	for k, v := range extra {
		servers[k] = v
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens")
	childEnv := map[string]string{envServeConfig: cfg, remote.EnvTokenDir: tokens}
	for k, v := range env {
		childEnv[k] = v
	}
	addr, p := testenv.StartSelf(t, childEnv)
	return member{addr: addr, tokens: tokens, proc: p}
}

// clusterTokenFile is where the members of one test find their shared
// cluster token (the first member creates it).
func clusterTokenFile(t *testing.T) string {
	return filepath.Join(t.TempDir(), "cluster.token")
}

// attach attaches a session from this process; a cleanup detaches it.
func attach(t *testing.T, m member, host mcprt.Host) *remote.Session {
	t.Helper()
	s, err := remote.Attach(testCtx(t), m.addr, remote.AttachOptions{Host: host, TokenFile: m.tokenFile(t)})
	if err != nil {
		t.Fatalf("attach %s: %v", m.addr, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func mcpCall(ctx context.Context, t *testing.T, s *remote.Session, args string) mcprt.Result {
	t.Helper()
	tool, ok := s.Tool(mcprt.MCPToolName)
	if !ok {
		t.Fatal("no mcp tool through the session")
	}
	return tool.Execute(ctx, json.RawMessage(args))
}

func tsStatus(t *testing.T, s *remote.Session) messages.ServerStatus {
	t.Helper()
	for _, st := range s.ServerStatuses() {
		if st.Name == "ts" {
			return st
		}
	}
	t.Fatal("no status for ts")
	return messages.ServerStatus{}
}

// TestSharedTwoSessionsOneServer: two sessions call the same stdio server
// of one member; it runs once (one connection, generation 1), and each
// session gets its own answer.
func TestSharedTwoSessionsOneServer(t *testing.T) {
	t.Parallel()
	m := startMember(t, nil)
	ctx := testCtx(t)
	a, b := attach(t, m, nil), attach(t, m, nil)
	wantOK(t, mcpCall(ctx, t, a, `{"tool":"echo","args":{"message":"from a"}}`), "echo: from a")
	wantOK(t, mcpCall(ctx, t, b, `{"tool":"echo","args":{"message":"from b"}}`), "echo: from b")
	res, err := b.CallTool(ctx, "ts", "add", map[string]any{"a": 2, "b": 3})
	if err != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "5") {
		t.Fatalf("typed call through the session: %+v, %v", res, err)
	}
	if st := tsStatus(t, a); st.Generation != 1 {
		t.Errorf("generation %d after two sessions' calls; want one connection (1)", st.Generation)
	}
	if got := a.Servers(); len(got) != 1 || got[0] != "ts" {
		t.Errorf("servers %v", got)
	}
}

// TestSharedDetachKeepsOthers: one session's detach cancels its own call
// in flight (its lease returns) and nothing of the other session's: the
// other's call in flight stays, its later calls work on the same
// connection, and the other's cancellation is its own.
func TestSharedDetachKeepsOthers(t *testing.T) {
	t.Parallel()
	m := startMember(t, nil)
	ctx := testCtx(t)
	a, b := attach(t, m, nil), attach(t, m, nil)
	wantOK(t, mcpCall(ctx, t, b, `{"tool":"echo","args":{"message":"warm"}}`), "echo: warm")
	gen := tsStatus(t, b).Generation

	var wg sync.WaitGroup
	var resA, resB mcprt.Result
	bctx, cancelB := context.WithCancel(ctx)
	defer cancelB()
	wg.Add(2)
	go func() { defer wg.Done(); resA = mcpCall(ctx, t, a, `{"tool":"hang","args":{}}`) }()
	go func() { defer wg.Done(); resB = mcpCall(bctx, t, b, `{"tool":"hang","args":{}}`) }()
	poll(ctx, t, "both hang calls in flight (2 leases)", func() bool { return tsStatus(t, b).Leases == 2 })

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "a's lease returned after its detach", func() bool { return tsStatus(t, b).Leases == 1 })
	wantOK(t, mcpCall(ctx, t, b, `{"tool":"echo","args":{"message":"still here"}}`), "echo: still here")
	if st := tsStatus(t, b); st.Generation != gen || st.State != messages.StateConnected {
		t.Errorf("after a's detach: generation %d (was %d), state %v; the connection must stay", st.Generation, gen, st.State)
	}
	cancelB()
	wg.Wait()
	wantError(t, resA, messages.KindShutdown.Code(), "")
	wantError(t, resB, messages.KindAborted.Code(), "")
	poll(ctx, t, "no lease left", func() bool { return tsStatus(t, b).Leases == 0 })
}

// TestSharedSessionKilled: SIGKILL of a session's process mid-call
// releases its lease (its connection's end ends the session at once; the
// heartbeat timeout, 5 s, bounds a silent one) and leaves the server
// connected for the others.
func TestSharedSessionKilled(t *testing.T) {
	t.Parallel()
	m := startMember(t, nil)
	ctx := testCtx(t)
	watcher := attach(t, m, nil)
	_, child := testenv.StartSelf(t, map[string]string{envAttachAddr: m.addr, remote.EnvTokenDir: m.tokens})
	poll(ctx, t, "the child's hang call in flight", func() bool { return tsStatus(t, watcher).Leases == 1 })
	gen := tsStatus(t, watcher).Generation
	if err := syscall.Kill(-child.Cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "the killed session's lease released", func() bool { return tsStatus(t, watcher).Leases == 0 })
	wantOK(t, mcpCall(ctx, t, watcher, `{"tool":"echo","args":{"message":"after kill"}}`), "echo: after kill")
	if st := tsStatus(t, watcher); st.Generation != gen {
		t.Errorf("generation %d after a session was killed, was %d", st.Generation, gen)
	}
}

// TestSharedMemberKilled: SIGKILL of the member fails the session's call
// in flight once with a clear error (disconnected, naming the member),
// and every later call at once.
func TestSharedMemberKilled(t *testing.T) {
	t.Parallel()
	m := startMember(t, nil)
	ctx := testCtx(t)
	s := attach(t, m, nil)
	done := make(chan mcprt.Result, 2)
	go func() { done <- mcpCall(ctx, t, s, `{"tool":"hang","args":{}}`) }()
	poll(ctx, t, "the hang call in flight", func() bool { return tsStatus(t, s).Leases == 1 })
	if err := syscall.Kill(-m.proc.Cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var r mcprt.Result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the call in flight was not failed after the member died")
	}
	wantError(t, r, messages.KindDisconnected.Code(), "")
	if !strings.Contains(r.Text, "shared runtime at "+m.addr+" is gone") {
		t.Errorf("error %q does not say the shared runtime is gone", r.Text)
	}
	select {
	case extra := <-done:
		t.Fatalf("a second answer to one call: %+v", extra)
	default:
	}
	_, err := s.CallTool(ctx, "ts", "echo", map[string]any{"message": "x"})
	if !errors.Is(err, mcprt.ErrDisconnected) {
		t.Errorf("a call after the member died: %v, want disconnected at once", err)
	}
}

// TestSharedRefusesWrongToken: a session without the member's token is
// refused at once with ErrUnauthenticated, and no session exists for it.
func TestSharedRefusesWrongToken(t *testing.T) {
	t.Parallel()
	m := startMember(t, nil)
	ctx := testCtx(t)
	bad := filepath.Join(t.TempDir(), "bad.token")
	if err := os.WriteFile(bad, []byte("not-the-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Attach(ctx, m.addr, remote.AttachOptions{TokenFile: bad}); !errors.Is(err, remote.ErrUnauthenticated) {
		t.Fatalf("attach with a wrong token: %v, want ErrUnauthenticated", err)
	}
	missing := filepath.Join(t.TempDir(), "none.token")
	if _, err := remote.Attach(ctx, m.addr, remote.AttachOptions{TokenFile: missing}); err == nil || !strings.Contains(err.Error(), "no token file") {
		t.Fatalf("attach without a token file: %v", err)
	}
	// The member never connected its server for them.
	if st := tsStatus(t, attach(t, m, nil)); st.Generation != 0 {
		t.Errorf("generation %d: something ran for a refused session", st.Generation)
	}
}
